import { CaptchaError, CasebridgeError, type ErrorKind } from '../../client/errors.js';
import { type CallRule, withRules } from '../../client/operations.js';
import { redact } from '../../client/secrets.js';
import type { TestManagementClient } from '../../client/tm.js';
import { type Clock, systemClock } from '../kernel/clock.js';
import { Problems } from '../kernel/problems.js';
import { TIMING } from '../kernel/timing.js';

/**
 * Whether the service is up, judged on recent answers, not one request (docs/architecture.md). Down when a call fails
 * before any success, after CONSECUTIVE failures, under 10% success of the last WINDOW, or QUIET_MS with two failures.
 */
export const WINDOW = 20;
export const CONSECUTIVE = 5;
export const MIN_SUCCESS_RATE = 0.1;
export const QUIET_MS = TIMING.quietMs;

export class ServiceWindow {
  private outcomes: boolean[] = [];
  private failedInRow = 0;
  private failuresSinceSuccess = 0;
  /** When a request last succeeded (undefined: none in this run). */
  lastSuccessAt?: number;
  /** Why the service is judged down (undefined: up). */
  down?: string;

  constructor(private readonly now: () => number = systemClock.now) {}

  /** A call answered (a result, or a certain refusal: the service works). Brings a down service up. */
  ok(): void {
    this.push(true);
    this.failedInRow = 0;
    this.failuresSinceSuccess = 0;
    this.lastSuccessAt = this.now();
    this.down = undefined;
  }

  /** A call failed for a reason that may pass (network, timeouts, 429/5xx after the client's retries). */
  failed(reason: string): void {
    this.push(false);
    this.failedInRow += 1;
    this.failuresSinceSuccess += 1;
    if (this.down) return;
    const successes = this.outcomes.filter(Boolean).length;
    const quiet = this.now() - (this.lastSuccessAt ?? Number.NEGATIVE_INFINITY);
    if (
      this.lastSuccessAt === undefined ||
      this.failedInRow >= CONSECUTIVE ||
      (this.outcomes.length >= WINDOW && successes < WINDOW * MIN_SUCCESS_RATE) ||
      (quiet >= QUIET_MS && this.failuresSinceSuccess >= 2)
    ) {
      this.down = reason;
    }
  }

  private push(ok: boolean): void {
    this.outcomes.push(ok);
    if (this.outcomes.length > WINDOW) this.outcomes.shift();
  }
}

/** What went wrong in a run: the summary's problem lines, whether the service answers, and the stops no wait heals. */
export class RunHealth {
  readonly window: ServiceWindow;
  /** Set for good: credentials or the URL are wrong; nothing more is sent in this run. */
  private stop?: string;
  private probing = false;
  private probe?: () => Promise<unknown>;
  private readonly waiters = new Set<() => void>();

  private readonly now: () => number;

  constructor(
    private readonly signal: AbortSignal,
    private readonly out: (text: string) => void,
    readonly clock: Clock = systemClock,
    /** The run's problems: its lines go there as `run` records (may repeat: the summary names each once). */
    private readonly sink: Problems = new Problems(),
  ) {
    this.now = () => clock.now();
    this.window = new ServiceWindow(this.now);
    signal.addEventListener('abort', () => this.wake(), { once: true });
  }

  /** Why nothing is sent now: a stop, or the service judged down (undefined: send). */
  get down(): string | undefined {
    return this.stop ?? this.window.down;
  }

  /** A stop no waiting heals (CAPTCHA, credentials, not Jira), or the run was aborted. */
  get stopped(): boolean {
    return this.stop !== undefined || this.signal.aborted;
  }

  /** Whether the run's end stops waiting: stopped, or down and silent for `ms` (or never answered: a wrong host). */
  gaveUp(ms: number): boolean {
    if (this.stopped) return true;
    if (!this.window.down) return false;
    const last = this.window.lastSuccessAt;
    return last === undefined || this.now() - last > ms;
  }

  /** Whether the service answered a request at `since` or later. */
  answeredSince(since: number): boolean {
    return (this.window.lastSuccessAt ?? Number.NEGATIVE_INFINITY) >= since;
  }

  /** The request that asks a down service whether it answers again (one cheap read, e.g. Jira's `myself`). */
  probeWith(probe: () => Promise<unknown>): void {
    this.probe = probe;
  }

  /** A call answered. */
  ok(): void {
    const was = this.window.down;
    this.window.ok();
    if (was && !this.stop) this.out('casebridge: the service answers again: delivery resumes');
    this.wake();
  }

  /** A call failed for a reason that may pass; may judge the service down (then it is probed). */
  failed(reason: string): void {
    const was = this.window.down;
    this.window.failed(reason);
    if (was || !this.window.down || this.stop) return;
    this.out(`casebridge: the service is not answering as it should (${reason}); asking again every few seconds`);
    void this.runProbe();
  }

  /** Resolves when the service is up again, or sending stopped for good (check `down` after). */
  whenUp(): Promise<void> {
    if (!this.window.down || this.stopped) return Promise.resolve();
    return new Promise((r) => this.waiters.add(r));
  }

  private wake(): void {
    if (this.window.down && !this.stopped) return;
    for (const w of this.waiters) w();
    this.waiters.clear();
  }

  private async runProbe(): Promise<void> {
    if (this.probing || !this.probe) return;
    this.probing = true;
    const { probeFirstMs, probeMaxMs } = this.clock.timing;
    let wait = probeFirstMs;
    try {
      while (this.window.down && !this.stopped) {
        await this.clock.sleep(wait, this.signal);
        if (!this.window.down || this.stopped) break;
        // Its outcome is recorded by withHealth like any call; a success wakes the waiters.
        await this.probe().catch(() => undefined);
        wait = Math.min(wait * 2, probeMaxMs);
      }
    } finally {
      this.probing = false;
    }
  }

  /** Stops sending for good (nothing that waits heals it); said once. */
  private stopFor(reason: string, line: string): void {
    if (this.stop) return;
    this.stop = reason;
    this.out(line);
    this.wake();
  }

  /** The lines this health recorded, oldest first. */
  get problems(): string[] {
    return this.sink.all().flatMap((p) => (p.kind === 'run' ? [p.message] : []));
  }

  /**
   * Classifies a failed delivery on the error's kind and `retryable`, never its message: `permanent` (dropped with a
   * problem line) or `later` (tried again, else journaled).
   */
  classify(err: unknown, what: string): 'permanent' | 'later' {
    if (this.signal.aborted) return 'later';
    const verdict = err instanceof CasebridgeError ? VERDICTS[err.kind] : undefined;
    if (!(err instanceof CasebridgeError) || !verdict || verdict.result === 'internal') {
      this.sink.add('run', `${what}: internal error: ${redact(err instanceof Error ? err.message : String(err))}`);
      return 'later';
    }
    if (verdict.result === 'stop') {
      const [reason, line] = STOPS[err.kind]?.(err, what) ?? [err.message, `casebridge: ${err.message}`];
      this.stopFor(reason, line);
      return 'later';
    }
    // An error that may work when sent again is never dropped: a 500 may be a fault of the service, not a refusal.
    if (verdict.result === 'later' || err.retryable) return 'later';
    const message = redact(err.message);
    this.sink.add('run', verdict.named ? message : `${what}: ${message}`);
    return 'permanent';
  }
}

type ResultVerdict = 'permanent' | 'later' | 'stop' | 'internal';
type ServiceVerdict = 'failing' | 'answered' | 'neither';

/**
 * What each error kind means for its result and for the service. A retryable `answered` (synapseRT's 500) counts as
 * neither: a status every run update refuses would otherwise call a working service down.
 */
const VERDICTS: Record<ErrorKind, { result: ResultVerdict; service: ServiceVerdict; named?: true }> = {
  aborted: { result: 'later', service: 'neither' },
  input: { result: 'permanent', service: 'neither' },
  config: { result: 'later', service: 'failing' },
  unauthorized: { result: 'stop', service: 'neither' },
  forbidden: { result: 'stop', service: 'neither' },
  captcha: { result: 'stop', service: 'neither' },
  'not-found': { result: 'permanent', service: 'answered' },
  validation: { result: 'permanent', service: 'answered' },
  'rate-limited': { result: 'later', service: 'failing' },
  http: { result: 'later', service: 'failing' },
  timeout: { result: 'later', service: 'failing' },
  network: { result: 'later', service: 'failing' },
  ambiguous: { result: 'later', service: 'failing' },
  'response-shape': { result: 'later', service: 'failing' },
  permanent: { result: 'permanent', service: 'neither', named: true },
  'not-jira': { result: 'stop', service: 'neither' },
  usage: { result: 'internal', service: 'neither' },
  cycle: { result: 'internal', service: 'neither' },
  junit: { result: 'internal', service: 'neither' },
  list: { result: 'internal', service: 'neither' },
  'missing-package': { result: 'internal', service: 'neither' },
  // The emulator's: each becomes an HTTP answer inside the emulator, which the client meets as its own kinds.
  service: { result: 'internal', service: 'neither' },
  admin: { result: 'internal', service: 'neither' },
  refused: { result: 'internal', service: 'neither' },
};

/** Why sending stops, for each kind whose verdict is `stop`: the reason (for the summary) and the line said once. */
const STOPS: Partial<Record<ErrorKind, (err: CasebridgeError, what: string) => [reason: string, line: string]>> = {
  // The client sends nothing more; the fix (a browser login) goes once into the summary, in full.
  captcha: (err) => [
    err.message.replace(/^HTTP 403: /, '').replace(/ \[[^\]]*\]$/, ''),
    `casebridge: Jira asks for a CAPTCHA${err instanceof CaptchaError && err.user ? ` for user ${err.user}` : ''}: stopped sending, results are kept on disk (the summary says what to do)`,
  ],
  'not-jira': (err) => [err.message, `casebridge: ${err.message}`],
  unauthorized: () =>
    notAnswering(
      'the service refused the credentials (HTTP 401): check token (CASEBRIDGE_TOKEN) or user and password (CASEBRIDGE_USER, CASEBRIDGE_PASSWORD)',
    ),
  forbidden: (err, what) => notAnswering(`${what}: ${redact(err.message)}`),
};

const notAnswering = (reason: string): [reason: string, line: string] => [
  reason,
  `casebridge: the service is not answering as it should (${reason}); results are kept on disk`,
];

/** What a failed call says of the service (see VERDICTS); an error outside the family says nothing. */
function verdict(err: unknown): ServiceVerdict {
  if (!(err instanceof CasebridgeError)) return 'neither';
  const v = VERDICTS[err.kind].service;
  return v === 'answered' && err.retryable ? 'neither' : v;
}

/** Counts every call's outcome in `health`, as a rule run in the same function per operation as compose.ts's. */
export function withHealth(tm: TestManagementClient, health: RunHealth): TestManagementClient {
  const counted: CallRule = {
    answered: () => health.ok(),
    failed: (err) => {
      const v = verdict(err);
      if (v === 'failing') health.failed(redact(err instanceof Error ? err.message : String(err)));
      else if (v === 'answered') health.ok();
      return undefined;
    },
  };
  // Jira's routes failing never stop delivery to synapseRT; a Jira answer still says the host works.
  const jira: CallRule = { answered: () => health.ok(), failed: () => undefined };
  const wrapped = withRules(tm, (group) => (group === 'jira' ? jira : counted));
  health.probeWith(() => wrapped.jira.myself({}));
  return wrapped;
}

/** Whether a failure whose tries are spent was a refusal of this result: an uncertain 500 while others are answered. */
export function refusedAlone(err: unknown, health: RunHealth): boolean {
  return (
    err instanceof CasebridgeError &&
    err.kind === 'validation' &&
    err.retryable &&
    health.answeredSince(health.clock.now() - health.clock.timing.refusalWindowMs)
  );
}
