import { createHash } from 'node:crypto';
import { AmbiguousError, NotFoundError } from '../client/errors.js';
import type { TestManagementClient } from '../client/tm.js';
import { closeAsDuplicate } from './duplicate.js';
import { memoByKey } from './keyed.js';
import { mappingKey } from './mapping.js';
import type { TestResult } from './model.js';
import { truncate } from './text.js';
import { topSteps } from './work.js';

/**
 * Test cases for unmapped tests (`autoCreate: true`), at the cost of one request per new case.
 *
 * Identity: a test is its mapping name (`<file> > <title path>`); its case carries the name's hash in the
 * description (`casebridge-id: <hash>`), which is matched exactly, never by text search (Jira's `~` is a fuzzy,
 * tokenised search: `parses` finds `parses dates`). Two tests with the same file and title path share a case.
 *
 * Cost: the project's casebridge-made cases are read once per run (one JQL query, paged by 1,000: two requests for
 * 1,400 cases), then each missing case is created (one request). A case made by another machine at the same moment
 * is found by a re-read after the creates (one query per wave of creates, at most one per `recheckEveryMs` while
 * creates go on): the oldest case of a name wins on every machine, so shards adopting one suite at once agree.
 */

/** A machine that came second re-reads this often while the first one creates cases, and waits at most this long. */
const FOLLOWER_READ_EVERY_MS = 1_000;
const FOLLOWER_WAIT_MAX_MS = 60_000;

export interface CaseRegistryOptions {
  /** In a dry run, wrapped by `withDryRun` (client/dry-run.ts). */
  tm: TestManagementClient;
  /**
   * A dry run: no case is looked up (a stand-in search finds nothing, and would show calls a dry run never made),
   * each test gets its create, and none counts as created.
   */
  dryRun?: boolean;
  project: string;
  /** The summary of a new case (the engine strips keys from the title). */
  summaryOf?: (t: TestResult) => string;
  /** Creates under way at once. Default 4. */
  concurrency?: number;
  /**
   * Whether another machine reports into the same place and came first (it made the cycle): then this one lets it
   * create cases and takes what it made (see pump). Asked once, before the first create.
   */
  second?: () => Promise<boolean>;
  signal?: AbortSignal;
  /** Least time between two re-reads while creates still go on. Default 1 s (250 ms once another machine is seen). */
  recheckEveryMs?: number;
  /** Something reached the service (a create, a read): the end of the run keeps waiting while this happens. */
  onProgress?: () => void;
}

/** A case found in the project by its identity. */
interface Found {
  id: number;
  key: string;
  /** Resolved (closed): used only when no open case of the identity is left. */
  closed: boolean;
}

/** The identity hash of a mapping name: 20 hex characters. */
export function caseIdentity(t: Pick<TestResult, 'file' | 'titlePath'>): string {
  return createHash('sha256').update(mappingKey(t)).digest('hex').slice(0, 20);
}

const ID_LINE = /^casebridge-id: ([0-9a-f]{20})\s*$/m;
const LEGACY_LINE = /^casebridge-test: (.*)$/m;

/** The identity a case's description carries (or, for cases of earlier versions, its mapping-name line). */
export function identityInDescription(description: string): string | undefined {
  const id = ID_LINE.exec(description)?.[1];
  if (id) return id;
  const legacy = LEGACY_LINE.exec(description)?.[1];
  return legacy === undefined ? undefined : createHash('sha256').update(legacy).digest('hex').slice(0, 20);
}

/** The suite path of a test file: its folders and its name without `.spec.ts` / `.test.js` and the like. */
export function suitePathOf(file: string): string {
  const parts = file.replace(/\\/g, '/').split('/').filter(Boolean);
  const last = (parts.pop() ?? 'tests').replace(/(\.(spec|test|e2e|cy))?\.[cm]?[jt]sx?$/i, '');
  return [...parts, last].map((p) => p.replace(/\//g, '\\/')).join('/');
}

/**
 * A case summary that Jira accepts for any title: one line, at most 255 characters, never blank. A blank title
 * takes its describe path and file (`cart > (untitled test) in tests/cart.spec.ts`).
 */
export function caseSummary(t: Pick<TestResult, 'file' | 'titlePath'>, title?: string): string {
  const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
  const own = oneLine(title ?? t.titlePath[t.titlePath.length - 1] ?? '');
  if (own) return truncate(own, 255);
  const describes = t.titlePath.slice(0, -1).map(oneLine).filter(Boolean);
  return truncate(`${[...describes, '(untitled test)'].join(' > ')} in ${t.file}`, 255);
}

export class CaseRegistry {
  /** What the first read found, by identity: every case of that identity, oldest first. */
  private index?: Promise<Map<string, Found[]>>;
  /** The key per identity: concurrent calls share one look-up or create; a failure is asked again. */
  private readonly keys = memoByKey<string, string>();
  /** Creates asked for and not yet answered (queued or under way). */
  private creating = 0;
  /** Tests waiting for a create, and how many creates are under way. */
  private queue: Array<{ test: TestResult; id: string; done: (key: string) => void; fail: (e: unknown) => void }> = [];
  private running = 0;
  private followerReady = false;
  private isSecond?: boolean;
  private role?: Promise<void>;
  private followerTimer?: NodeJS.Timeout;
  private followerSince?: number;
  private followerCount = -1;
  /** The newest read of the project's cases: checked again right before each create. */
  private latest?: Map<string, Found[]>;
  /** Cases created by this process, waiting for the re-read that decides whether they are the oldest. */
  private waiting = new Map<string, Array<{ key: string; done: (key: string) => void; fail: (e: unknown) => void }>>();
  private recheckTimer?: NodeJS.Timeout;
  private rechecking = false;
  /** The first re-read waits as long after the start as later ones after each other: a burst of creates, one read. */
  private lastRecheck = Date.now();
  /** Cases this process created and kept (and the same as a set, for `isNew` on every result). */
  readonly created: string[] = [];
  private readonly createdSet = new Set<string>();
  /** Cases this process created while another machine created the same test's case first: not used. */
  readonly duplicates: Array<{ key: string; kept: string }> = [];
  /** Mapping names resolved since the last `takeResolved()`: the engine writes them to the mapping file. */
  private resolved: Record<string, string> = {};
  private readonly every: number;

  constructor(private readonly o: CaseRegistryOptions) {
    this.every = o.recheckEveryMs ?? 1000;
  }

  /** Whether this process created the case `key` (a new case is in no plan yet). */
  isNew(key: string): boolean {
    return this.createdSet.has(key);
  }

  /** Whether creates or re-reads are still under way. */
  get busy(): boolean {
    return this.creating > 0 || this.waiting.size > 0 || this.rechecking;
  }

  /**
   * The case key of an unmapped test: found among the project's casebridge cases, or created. Concurrent calls for
   * one identity share one create.
   */
  keyOf(test: TestResult): Promise<string> {
    const id = caseIdentity(test);
    return this.keys(id, () => {
      const p = this.resolve(test, id);
      p.then(
        (key) => {
          this.resolved[mappingKey(test)] = key;
        },
        () => undefined,
      );
      return p;
    });
  }

  /** Starts the first read now (the run knows it will need it), so the first unmapped result does not wait for it. */
  warmUp(): void {
    if (!this.o.dryRun) this.lookup().catch(() => undefined);
  }

  /** Mapping names and keys resolved since the last call. */
  takeResolved(): Record<string, string> {
    const out = this.resolved;
    this.resolved = {};
    return out;
  }

  private lookup(): Promise<Map<string, Found[]>> {
    if (!this.index) {
      this.index = this.readAll().then((m) => {
        this.latest = m;
        return m;
      });
      this.index.catch(() => {
        this.index = undefined;
      });
    }
    return this.index;
  }

  /**
   * Every casebridge-made test case of the project, by identity. One JQL query, paged: the server may cap
   * `maxResults` below what was asked (Jira Data Center: often 1,000), so the next page starts after what came.
   */
  private async readAll(): Promise<Map<string, Found[]>> {
    const jql = `project = "${this.o.project}" AND issuetype = "Test Case" AND description ~ "casebridge" ORDER BY created ASC`;
    const out = new Map<string, Found[]>();
    let startAt = 0;
    for (;;) {
      const page = await this.o.tm.jira.search(
        { jql, fields: 'description,resolution', startAt, maxResults: 1000 },
        { signal: this.o.signal },
      );
      this.o.onProgress?.();
      for (const issue of page.issues) {
        const f = (issue as { fields?: { description?: unknown; resolution?: unknown } }).fields ?? {};
        const id = identityInDescription(String(f.description ?? ''));
        if (!id) continue;
        const list = out.get(id) ?? [];
        list.push({
          id: Number(issue.id),
          key: issue.key,
          closed: f.resolution !== null && f.resolution !== undefined,
        });
        out.set(id, list);
      }
      startAt += page.issues.length;
      if (page.issues.length === 0 || startAt >= page.total) break;
    }
    // Open cases first, then the oldest: every machine picks the same one.
    for (const list of out.values()) list.sort((a, b) => Number(a.closed) - Number(b.closed) || a.id - b.id);
    return out;
  }

  private async resolve(test: TestResult, id: string): Promise<string> {
    if (this.o.dryRun) return this.create(test, id);
    const found = (await this.lookup()).get(id)?.[0];
    if (found) return found.key;
    return new Promise<string>((done, fail) => {
      this.creating += 1;
      this.queue.push({ test, id, done, fail });
      this.pump();
    });
  }

  /**
   * Starts creates while fewer than `concurrency` are under way. A machine that came second (another machine made
   * the cycle) first lets the other create: it re-reads the project's cases every
   * FOLLOWER_READ_EVERY_MS and takes what appeared, as long as the count grows (at most FOLLOWER_WAIT_MAX_MS), then
   * creates only what is still missing, from the end of its list.
   */
  private pump(): void {
    if (this.queue.length === 0) return;
    if (this.isSecond === undefined) {
      this.role ??= (this.o.second?.() ?? Promise.resolve(false))
        .catch(() => false)
        .then((second) => {
          this.isSecond = second;
          this.pump();
        });
      return;
    }
    if (!this.followerReady && this.isSecond) {
      this.followerSince ??= Date.now();
      this.followerTimer ??= setTimeout(() => void this.followerRead(), FOLLOWER_READ_EVERY_MS);
      return;
    }
    const max = this.o.concurrency ?? 4;
    while (this.running < max && this.queue.length > 0) {
      const job = (this.isSecond ? this.queue.pop() : this.queue.shift()) as (typeof this.queue)[number];
      this.running += 1;
      void this.createOne(job).finally(() => {
        this.running -= 1;
        this.creating -= 1;
        this.pump();
        this.scheduleRecheck();
      });
    }
  }

  private async followerRead(): Promise<void> {
    let grew = false;
    try {
      this.index = undefined;
      const index = await this.lookup();
      const count = [...index.values()].reduce((n, l) => n + l.length, 0);
      grew = count > this.followerCount;
      this.followerCount = count;
      this.queue = this.queue.filter((job) => {
        const found = index.get(job.id)?.[0];
        if (!found) return true;
        this.creating -= 1;
        job.done(found.key);
        return false;
      });
    } catch {
      grew = false;
    }
    this.followerTimer = undefined;
    if (!grew || Date.now() - (this.followerSince ?? 0) > FOLLOWER_WAIT_MAX_MS) this.followerReady = true;
    this.pump();
  }

  private async createOne(job: (typeof this.queue)[number]): Promise<void> {
    try {
      // Another machine may have made it since: the newest read says so, at no cost.
      const found = this.latest?.get(job.id)?.[0];
      if (found) {
        job.done(found.key);
        return;
      }
      const key = await this.create(job.test, job.id);
      this.o.onProgress?.();
      const list = this.waiting.get(job.id) ?? [];
      list.push({ key, done: job.done, fail: job.fail });
      this.waiting.set(job.id, list);
    } catch (err) {
      job.fail(err);
    }
  }

  private async create(test: TestResult, id: string): Promise<string> {
    const { tm, project } = this.o;
    const fields = {
      project: { key: project },
      summary: this.o.summaryOf ? this.o.summaryOf(test) : caseSummary(test),
      description: [
        `Created by casebridge for ${test.file}${test.line ? `:${test.line}` : ''}`,
        `casebridge-test: ${mappingKey(test).replace(/[\r\n]+/g, ' ')}`,
        `casebridge-id: ${id}`,
      ].join('\n'),
    };
    const testcasesteps = topSteps(test).map((s) => ({
      step: truncate(s.title.trim() || '(untitled step)', 2000),
      expectedResult: '',
    }));
    const input = {
      fields,
      testcasesteps,
      linkToTestSuite: { testSuitePath: suitePathOf(test.file), projectKey: project },
    };
    const signal = this.o.signal ? { signal: this.o.signal } : undefined;
    try {
      return (await tm.cases.createTestCaseInSuite(input, signal)).testCaseKey;
    } catch (err) {
      if (err instanceof AmbiguousError) {
        // The answer was lost: the create may have happened. Read again (a fresh read, not the cached one).
        this.index = undefined;
        const again = (await this.lookup()).get(id)?.[0];
        if (again) return again.key;
        throw err;
      }
      // The older service variant has no suite creation: a plain test case.
      if (!(err instanceof NotFoundError)) throw err;
      return (await tm.cases.createTestCase({ fields, testcasesteps }, signal)).key;
    }
  }

  /**
   * One re-read for every create answered since the last: at once when no create is left, otherwise at most one
   * per `recheckEveryMs` (a 1,400-case adoption costs a handful of re-reads, not one per case).
   */
  private scheduleRecheck(): void {
    if (this.rechecking || this.recheckTimer || this.waiting.size === 0) return;
    const every = this.duplicates.length > 0 || this.followerReady ? Math.min(this.every, 250) : this.every;
    const wait = this.creating > 0 ? Math.max(0, this.lastRecheck + every - Date.now()) : 0;
    this.recheckTimer = setTimeout(() => {
      this.recheckTimer = undefined;
      void this.recheck();
    }, wait);
  }

  private async recheck(): Promise<void> {
    this.rechecking = true;
    const batch = this.waiting;
    this.waiting = new Map();
    try {
      this.index = undefined;
      const index = await this.lookup();
      for (const [id, list] of batch) {
        const oldest = index.get(id)?.[0]?.key;
        for (const w of list) {
          const kept = oldest ?? w.key;
          if (kept === w.key) {
            this.created.push(w.key);
            this.createdSet.add(w.key);
          } else {
            this.duplicates.push({ key: w.key, kept });
            await closeAsDuplicate(this.o.tm, w.key, this.o.signal);
          }
          w.done(kept);
        }
      }
    } catch (err) {
      for (const list of batch.values()) for (const w of list) w.fail(err);
    } finally {
      this.rechecking = false;
      this.lastRecheck = Date.now();
      this.scheduleRecheck();
    }
  }
}
