import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { type FaultRuleInput, faultRuleSchema } from './behaviour/faults.js';
import type { JiraBehaviourInput } from './behaviour/profile.js';
import type { EmulatorOptions } from './kernel/emulator.js';
import { DEFAULT_PORT } from './server.js';

export const HELP = `casebridge-emulator: a local stand-in for the synapseRT test-management API and the edu-sharing
content repository (see packages/emulator/README.md).

Usage: casebridge-emulator [options]

  --port N             port to listen on (default ${DEFAULT_PORT}; 0 picks a free one)
  --host H             address to listen on (default 127.0.0.1)
  --seed FILE          seed JSON file, or "demo" (default) or "empty"
  --variant id|ID      identifier spelling of responses (default id)
  --timestamps F       executionTimeStamp format: iso, legacy or epoch (default: iso for id, legacy for ID)
  --data DIR           keep state in DIR (JSON lines + files) across restarts; default in memory
  --repo-guest         content repository: unauthenticated requests run as guest
  --rate-limit RPS     answer 429 (Retry-After) above RPS requests per second (Jira's default: off);
                       N/S: N requests every S seconds, e.g. 100/60 or 5000/3600
  --rate-limit-per-user  one bucket per user, as Jira 8.6+ does (default one bucket for all)
  --rate-limit-burst N   bucket size (default RPS rounded up)
  --retry-after S      Retry-After of the limiter's 429, 0 to 86400 (default: time to the next token)
  Jira Data Center behaviour (profile defaults; each flag wins over the profile, see the README):
  --profile P          realistic (default) or ideal (one node, no lag, no window, substring ~)
  --nodes N            simulated nodes behind a ROUTEID load balancer (realistic 2)
  --index-lag MS[,MS]  search index lag after a write, one value or one per node (realistic 1000)
  --search-max-results N  largest search page (realistic 100, ideal 1000)
  --result-window N|off   startAt + maxResults limit of a search (realistic 10000)
  --result-window-mode M  past the window: error (500) or empty (an empty page)
  --text-search M      ~ as tokenised (Jira) or substring
  --pat-as-basic on|off   a personal access token works as a Basic password (realistic off)
  --captcha-after N|off   failed logins before the CAPTCHA when the seed sets none (realistic 3)
  --bulk-create-max N     issues one bulk create takes; 0: no bulk create route (realistic 50)
  --create-ms MS          time Jira takes to create one issue, each of a bulk create too (realistic 25)
  Faults (all scoped by --fault-route, deterministic with --fault-seed):
  --latency MS         added latency per request
  --jitter MS          random extra latency in [0, MS)
  --error-rate S=P,..  answer status S with probability P (S in 429, 500, 502, 503, 504), e.g. 503=0.3
  --reset-rate P       destroy the connection with probability P
  --hang-rate P        hold the answer for --hang-ms with probability P
  --hang-ms MS         (default 30000)
  --malformed-rate P   replace a body with a malformed one with probability P
  --fault-route GLOB   path glob the faults apply to (default **)
  --faults FILE        JSON array of fault rules (see the README)
  --fault-seed N       seed for the fault dice (default 1)
  --demo               print what the demo data holds and how to reach it
  -h, --help           this text
`;

function num(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`--${name} expects a number, got "${v}"`);
  return n;
}

const FAULT_STATUSES = ['429', '500', '502', '503', '504'];

function parseErrorRates(v: string | undefined): Record<string, number> | undefined {
  if (!v) return undefined;
  const out: Record<string, number> = {};
  for (const pair of v.split(',')) {
    const [s, p] = pair.split('=');
    if (!s || p === undefined || p.trim() === '' || !Number.isFinite(Number(p))) {
      throw new Error(`--error-rate expects STATUS=PROBABILITY pairs such as 503=0.3,429=0.1, got "${pair}"`);
    }
    if (!FAULT_STATUSES.includes(s.trim())) {
      throw new Error(`--error-rate: status ${s.trim()} cannot be injected; use ${FAULT_STATUSES.join(', ')}`);
    }
    out[s.trim()] = Number(p);
  }
  return out;
}

/** The flag that sets each field of the command-line fault rule, to name it in error messages. */
const FLAG_OF: Record<string, string> = {
  route: '--fault-route',
  latencyMs: '--latency',
  jitterMs: '--jitter',
  errors: '--error-rate',
  resetRate: '--reset-rate',
  hangRate: '--hang-rate',
  hangMs: '--hang-ms',
  malformedRate: '--malformed-rate',
};

/** Validates fault rules before the emulator starts, naming the flag or the file and field at fault. */
function checkRules(rules: unknown, from: 'flags' | string): void {
  const r = z.array(faultRuleSchema).safeParse(rules);
  if (r.success) return;
  const problems = r.error.issues.map((i) => {
    const [index, field, ...rest] = i.path.map(String);
    if (from === 'flags') return `${FLAG_OF[field ?? ''] ?? field}: ${i.message}`;
    const at = [field, ...rest].filter(Boolean).join('.');
    return `rule ${index}${at ? `, field ${at}` : ''}: ${i.message}`;
  });
  throw new Error(
    from === 'flags'
      ? `invalid fault option(s): ${problems.join('; ')}`
      : `invalid fault rules in ${from}: ${problems.join('; ')}`,
  );
}

function readFaultsFile(path: string): FaultRuleInput[] {
  let rules: unknown;
  try {
    rules = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`--faults: cannot read ${path}: ${(err as Error).message}`);
  }
  if (!Array.isArray(rules)) throw new Error(`--faults: ${path} must hold a JSON array of fault rules`);
  checkRules(rules, path);
  return rules as FaultRuleInput[];
}

/** An `on`/`off` flag. */
function onOff(name: string, v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  if (v === 'on' || v === 'off') return v === 'on';
  throw new Error(`--${name} expects on or off, got "${v}"`);
}

/** A number flag that also takes `off` (null). */
function numOrOff(name: string, v: string | undefined): number | null | undefined {
  return v === 'off' ? null : num(name, v);
}

/** The Jira behaviour flags; what they leave out comes from the profile (checked by startEmulator, naming the knob). */
function jiraKnobs(values: Record<string, string | boolean | undefined>): JiraBehaviourInput {
  const str = (name: string) => values[name] as string | undefined;
  const lag = str('index-lag');
  return {
    nodes: num('nodes', str('nodes')),
    indexLagMs: lag?.includes(',') ? lag.split(',').map((v) => num('index-lag', v) as number) : num('index-lag', lag),
    searchMaxResults: num('search-max-results', str('search-max-results')),
    resultWindow: numOrOff('result-window', str('result-window')),
    resultWindowMode: str('result-window-mode') as JiraBehaviourInput['resultWindowMode'],
    textSearch: str('text-search') as JiraBehaviourInput['textSearch'],
    patAsBasic: onOff('pat-as-basic', str('pat-as-basic')),
    captchaAfterFailedLogins: numOrOff('captcha-after', str('captcha-after')),
    bulkCreateMax: num('bulk-create-max', str('bulk-create-max')),
    createMs: num('create-ms', str('create-ms')),
  };
}

/** What the command line asks for: the help, or an emulator's options (and whether to describe the demo data). */
export type CliRequest =
  | { help: true }
  | { help?: false; options: EmulatorOptions & { faults: FaultRuleInput[] }; demo: boolean };

/** Parses and checks the arguments, throwing an error that names the option and the value it got. */
export function parseCli(argv: readonly string[]): CliRequest {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      seed: { type: 'string' },
      variant: { type: 'string' },
      timestamps: { type: 'string' },
      data: { type: 'string' },
      'repo-guest': { type: 'boolean' },
      'rate-limit': { type: 'string' },
      'rate-limit-per-user': { type: 'boolean' },
      'rate-limit-burst': { type: 'string' },
      'retry-after': { type: 'string' },
      profile: { type: 'string' },
      nodes: { type: 'string' },
      'index-lag': { type: 'string' },
      'search-max-results': { type: 'string' },
      'result-window': { type: 'string' },
      'result-window-mode': { type: 'string' },
      'text-search': { type: 'string' },
      'pat-as-basic': { type: 'string' },
      'captcha-after': { type: 'string' },
      'bulk-create-max': { type: 'string' },
      'create-ms': { type: 'string' },
      latency: { type: 'string' },
      jitter: { type: 'string' },
      'error-rate': { type: 'string' },
      'reset-rate': { type: 'string' },
      'hang-rate': { type: 'string' },
      'hang-ms': { type: 'string' },
      'malformed-rate': { type: 'string' },
      'fault-route': { type: 'string' },
      faults: { type: 'string' },
      'fault-seed': { type: 'string' },
      demo: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) return { help: true };
  if (values.variant && values.variant !== 'id' && values.variant !== 'ID') {
    throw new Error(`--variant expects id or ID, got "${values.variant}"`);
  }
  if (values.timestamps && !['iso', 'legacy', 'epoch'].includes(values.timestamps)) {
    throw new Error(`--timestamps expects iso, legacy or epoch, got "${values.timestamps}"`);
  }
  const faults: FaultRuleInput[] = [];
  if (values.faults) faults.push(...readFaultsFile(values.faults));
  const rule: FaultRuleInput = {
    route: values['fault-route'] ?? '**',
    latencyMs: num('latency', values.latency),
    jitterMs: num('jitter', values.jitter),
    errors: parseErrorRates(values['error-rate']) as FaultRuleInput['errors'],
    resetRate: num('reset-rate', values['reset-rate']),
    hangRate: num('hang-rate', values['hang-rate']),
    hangMs: num('hang-ms', values['hang-ms']),
    malformedRate: num('malformed-rate', values['malformed-rate']),
  };
  const hasRule = Object.entries(rule).some(([k, v]) => k !== 'route' && v !== undefined);
  if (hasRule) {
    const given = Object.fromEntries(Object.entries(rule).filter(([, v]) => v !== undefined)) as FaultRuleInput;
    checkRules([given], 'flags');
    faults.push(given);
  }

  // `N` requests per second, or `N/S`: Jira's "requests allowed" N per interval of S seconds.
  const [fill, per] = (values['rate-limit'] ?? '').split('/');
  const rps = num('rate-limit', fill || undefined);
  const interval = per === undefined ? undefined : num('rate-limit', per);
  if (rps !== undefined && (!(rps > 0) || (interval !== undefined && !(interval > 0)))) {
    throw new Error(
      `--rate-limit expects requests per second above 0, got "${values['rate-limit']}" (or N/SECONDS above 0, e.g. 100/60)`,
    );
  }
  const options: EmulatorOptions & { faults: FaultRuleInput[] } = {
    port: num('port', values.port) ?? DEFAULT_PORT,
    host: values.host ?? '127.0.0.1',
    seed: values.seed,
    variant: values.variant as 'id' | 'ID' | undefined,
    timestamps: values.timestamps as EmulatorOptions['timestamps'],
    dataDir: values.data,
    repoGuest: values['repo-guest'] ?? false,
    rateLimit: rps
      ? {
          ...(interval === undefined ? { requestsPerSecond: rps } : { fillRate: rps, intervalSeconds: interval }),
          burst: num('rate-limit-burst', values['rate-limit-burst']),
          retryAfterSeconds: num('retry-after', values['retry-after']),
          perUser: values['rate-limit-per-user'] ?? false,
        }
      : undefined,
    profile: values.profile as EmulatorOptions['profile'],
    jira: jiraKnobs(values),
    faults,
    faultSeed: num('fault-seed', values['fault-seed']),
  };
  return { options, demo: values.demo ?? false };
}
