import { clientsFor, compareKeys, quarantineOptions, readQuarantine } from '@casebridge/core/internal';
import { configFor, type KeysFormat, readMapping } from './cycle-keys.js';
import { allBut, grepPattern, type MappedTest, mappedTests, type Runner } from './grep-pattern.js';

/**
 * `casebridge cycle keys --quarantined`: the project's quarantined cases (the reporters' option `quarantine`), as a
 * filter that leaves them out of the run. The reporters read the same set: Playwright 1.62+ runs these tests
 * expected-to-fail on its own; Jest, Vitest and older Playwright can only report them, so their summary points here.
 *
 * Cost: core's readQuarantine, one Jira search (`project = P AND labels = L`) plus one read per open labelled bug
 * (at most 50), whatever the number of tests: at 10,000 tests it is still one request when no bug carries the label.
 */

/** A Jira label as the `quarantine.label` option takes it (the config's rule: it goes into JQL between quotes). */
export const LABEL = /^[^\s"'\\]+$/;

export interface QuarantineQuery {
  /** The label; default: `quarantine.label` of the configuration. */
  label?: string;
  /** Read the casebridge reporter's options from this runner's config too; shapes the pattern (see formatQuarantined). */
  runner?: Runner;
}

export interface QuarantineResult {
  label: string;
  /** The quarantined case keys, each once, by project and number. */
  keys: string[];
  /** Why each key is quarantined (`label casebridge-quarantine`, `bug DEMO-40 (label casebridge-quarantine)`). */
  why: Record<string, string>;
  /** Mapping-file tests of those keys: keyless tests carry no key in their names. */
  tests: MappedTest[];
  /** Lines for stderr: where the options and the mapping came from, what is quarantined and why. */
  notes: string[];
}

/** Quarantined cases named one per line on stderr; past that, how many more. */
const NAMED = 20;

/** Reads the quarantined set of the configured project (see the module comment for what it costs). */
export async function quarantinedKeys(
  query: QuarantineQuery,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<QuarantineResult> {
  const notes: string[] = [];
  // Ad hoc whatever the configuration says: no plan is needed, and a cycle-mode config whose plan CI sets only for
  // the test step must not make this command fail.
  const inline = { mode: 'adhoc', ...(query.label ? { quarantine: { label: query.label } } : {}) };
  const c = await configFor(query.runner, inline, cwd, env, notes);
  const label = c.quarantine.label;
  if (!c.quarantine.enabled) {
    notes.push(
      'quarantine is off in the configuration (quarantine.enabled: false, CASEBRIDGE_QUARANTINE): the reporters do not treat these cases as quarantined',
    );
  }
  const { tm, repo } = clientsFor(c);
  try {
    const set = await readQuarantine(quarantineOptions(c, tm));
    const keys = [...set.cases.keys()].sort(compareKeys);
    const why = Object.fromEntries(keys.map((k) => [k, set.cases.get(k) as string]));
    notes.push(
      `project ${c.projectKey}, label ${label}: ${keys.length} quarantined case(s) (${set.requests} request(s))`,
    );
    for (const k of keys.slice(0, NAMED)) notes.push(`  ${k}: ${why[k]}`);
    if (keys.length > NAMED) notes.push(`  and ${keys.length - NAMED} more (--format lines lists them all)`);
    if (set.expired.size > 0) {
      const ended = [...set.expired].map(([k, e]) => `${k} (until ${e.until})`);
      notes.push(
        `${ended.length} expired quarantine(s) left out, they no longer apply: ${ended.slice(0, NAMED).join(', ')}${ended.length > NAMED ? ', ...' : ''} (casebridge quarantine list)`,
      );
    }
    if (set.cap && set.overCap.length > 0) {
      notes.push(
        `${set.overCap.length} quarantine(s) past the cap left out, they do not apply (quarantine.max ${c.quarantine.max} allows ${set.cap.allowed} of the ${set.cap.total} cases of ${set.cap.of}): ${set.overCap.slice(0, NAMED).join(', ')}${set.overCap.length > NAMED ? ', ...' : ''}`,
      );
    }
    if (set.capUnread !== undefined) {
      notes.push(
        `the quarantine cap was not checked (the cases could not be counted: ${set.capUnread}): every quarantine listed`,
      );
    }
    if (set.bugsNotRead.length > 0) {
      notes.push(
        `${set.bugsNotRead.length} more open issue(s) carry the label and were not read (${set.bugsNotRead.slice(0, 5).join(', ')}${set.bugsNotRead.length > 5 ? ', ...' : ''}): the cases of their runs are not in the list; a label on that many bugs is likely a mistake`,
      );
    }
    const tests = mappedTests(readMapping(c, cwd, notes), keys);
    if (tests.length > 0) notes.push(`${c.mappingFile}: ${tests.length} test(s) mapped to these keys`);
    return { label, keys, why, tests, notes };
  } finally {
    await tm.close();
    await repo?.close();
  }
}

/**
 * What is printed on stdout for `format`; empty when nothing is quarantined. The grep pattern matches the
 * quarantined tests, for Playwright's `--grep-invert` (the default, and with `--runner playwright`); with
 * `--runner jest|vitest` it matches every test but those (allBut), for `-t`, which only selects. The JSON says which
 * (`invert: true`: give `grep` to an inverting filter).
 */
export function formatQuarantined(r: QuarantineResult, format: KeysFormat, runner?: Runner): string {
  if (r.keys.length === 0) return '';
  if (format === 'lines') return r.keys.join('\n');
  const titlePaths = r.tests.map((t) => t.titlePath);
  const matching = grepPattern(r.keys, titlePaths, runner);
  const invert = runner !== 'jest' && runner !== 'vitest';
  const grep = invert ? matching : allBut(matching);
  if (format === 'grep') return grep;
  return JSON.stringify({
    label: r.label,
    keys: r.keys,
    why: r.why,
    titles: r.tests.map((t) => t.name),
    grep,
    invert,
  });
}
