import { redact } from '../client/secrets.js';
import { caseIdentity } from './cases/identity.js';
import { resolveKeys } from './cases/mapping.js';
import { readCycleCases, SelectionError, selectPlanned } from './cases/select.js';
import type { PlannedTest, RunSummary } from './kernel/types.js';
import type { Session } from './session.js';

/**
 * A run's selection (option `select`), read once before the run (Playwright 1.62+). When it cannot be made every test
 * runs and one line says why: a run that tests too much is seen, one that silently tests nothing passes green.
 */

export type SelectionSummary = NonNullable<RunSummary['selection']>;

/** `select` without a cycle (CASEBRIDGE_SELECT_STATUS set for every job, the cycle for some): nothing to select. */
export const NO_CYCLE = 'no cycle to select from: set select.cycle (CASEBRIDGE_SELECT_CYCLE) with status or tester';

/** Cases named in a line at most; the rest are counted (the summary's JSON has them all). */
const LISTED = 20;

export async function selectTests(
  s: Session,
  tests: readonly PlannedTest[],
  o: { signal: AbortSignal; timeoutMs: number; out: (line: string) => void },
): Promise<{ ids?: Set<string>; summary: SelectionSummary }> {
  const sel = s.config.select;
  const plan = sel?.plan ?? s.config.testPlan;
  const cycle = sel?.cycle ?? '';
  const base: SelectionSummary = {
    plan: plan ?? '',
    cycle,
    filters: [],
    cases: 0,
    tests: tests.length,
    selected: tests.length,
    uncovered: [],
  };
  const everyTest = (problem: string) => {
    o.out(`casebridge: select: ${problem}; every test runs`);
    return { summary: { ...base, problem } };
  };
  if (!sel) return { summary: base };
  if (!sel.cycle) return everyTest(NO_CYCLE);
  if (!plan)
    return everyTest('no test plan to read the cycle from: set select.plan (CASEBRIDGE_SELECT_PLAN) or testPlan');
  if (s.dry) {
    return everyTest(
      `not applied in a dry run (it sends nothing, reads included); \`npx @casebridge/cli cycle keys --plan ${plan} --cycle '${cycle}'\` lists the cases it would select`,
    );
  }
  const where = `cycle "${cycle}" of ${plan}`;
  try {
    const read = readCycleCases(
      s.tm,
      { plan, cycle, statuses: sel.status, tester: sel.tester, statusOption: 'select.status' },
      o.signal,
    );
    // Tests without a key find their case by the identity casebridge wrote in it (autoCreate): the same read of the
    // project's casebridge cases the run makes anyway for them, made now and at the same time.
    const keysOf = (t: PlannedTest) => resolveKeys({ ...t, attempts: [] }, s.keyRe, s.mapping);
    const keyless = tests.some((t) => keysOf(t).length === 0);
    const index = keyless && s.cases ? s.cases.index : undefined;
    const indexRead = index
      ? bounded(index.ready(), o.signal).then(
          () => true,
          () => false,
        )
      : Promise.resolve(false);
    const [cases, indexed] = await Promise.all([read, indexRead]);
    const createdKey = (t: PlannedTest) => {
      const found = indexed ? index?.casesOf(caseIdentity(t))[0] : undefined;
      return found && !found.closed ? found.key : undefined;
    };
    const picked = selectPlanned(tests, cases.keys, keysOf, createdKey);
    const summary: SelectionSummary = {
      ...base,
      cycle: `${cases.cycle.name}`,
      cycleId: cases.cycle.id,
      filters: cases.filters,
      cases: cases.keys.length,
      selected: picked.tests.length,
      uncovered: picked.uncovered,
    };
    const filters = cases.filters.length ? `, ${cases.filters.join(' and ')}` : '';
    const head = `casebridge: select: cycle "${cases.cycle.name}" (#${cases.cycle.id}) of ${plan}${filters}: ${cases.keys.length} case(s) of ${cases.runs} run(s)`;
    if (picked.tests.length === 0) {
      o.out(`${head}; no test maps ${cases.keys.length ? 'them' : 'a case'}: every test is excluded, nothing runs`);
    } else {
      o.out(
        `${head}: ${picked.tests.length} of ${tests.length} test(s) run, ${tests.length - picked.tests.length} excluded`,
      );
    }
    if (picked.uncovered.length) o.out(`casebridge: select: ${uncoveredLine(picked.uncovered)}`);
    return { ids: new Set(picked.tests.map((t) => t.id)), summary };
  } catch (err) {
    if (err instanceof SelectionError) return everyTest(err.message);
    const why = redact(err instanceof Error ? err.message : String(err));
    return everyTest(
      o.signal.aborted
        ? `${where} could not be read within ${o.timeoutMs / 1000} s (${why})`
        : `${where} could not be read (${why})`,
    );
  }
}

/** For a runner that cannot select: the `casebridge cycle keys` line writing a file its filter reads. */
export function cycleKeysInstead(
  sel: { cycle: string; status: readonly string[]; tester?: string | undefined },
  plan: string | undefined,
  runner: string,
): string {
  const q = (v: string) => (/^[\w.@-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`);
  const file = '.casebridge/select.txt';
  const args = [
    ...(plan ? ['--plan', plan] : []),
    '--cycle',
    q(sel.cycle),
    ...(sel.status.length ? ['--status', q(sel.status.join(','))] : []),
    ...(sel.tester ? ['--tester', q(sel.tester)] : []),
    ...(runner === 'jest' || runner === 'vitest' ? ['--runner', runner] : []),
    '--file',
    file,
  ];
  const filter = runner === 'jest' || runner === 'vitest' ? '-t' : '--grep';
  return `\`npx @casebridge/cli cycle keys ${args.join(' ')}\` writes the pattern for ${filter} "$(cat ${file})" or the config (see the CLI README)`;
}

/** The cases of the cycle no test maps, named (at most LISTED). */
export function uncoveredLine(keys: readonly string[]): string {
  const named = keys.slice(0, LISTED).join(', ');
  const more = keys.length > LISTED ? `, and ${keys.length - LISTED} more` : '';
  return `${keys.length} case(s) of the cycle have no test here: ${named}${more} (a key in a test's title, tag or annotation, or the mapping file, maps a test to its case)`;
}

/** `p`, or a rejection when `signal` aborts first. */
function bounded<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const stop = () => reject(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}
