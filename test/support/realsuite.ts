import { existsSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { JEST_PACKAGE, jestConfig } from './jest.js';
import { fixture, ROOT, type RunOutput, run } from './runner.js';

/**
 * A generated suite that looks like a real project's, for the tests of a first run on a real suite (issue 14): about
 * 40 files in nested folders (one file name in many folders), titles that real projects have and that our own small
 * fixtures never show — empty titles, titles that are prefixes of others, one title in many files and describe
 * blocks, parametrised titles, JQL words and characters, emoji, right-to-left text, 300-character titles — about 1%
 * failing and 1% skipped, and no case keys anywhere. The same size and runner always give the same files, so two
 * folders generated alike are two checkouts of one repository.
 */

export type SuiteRunner = 'jest' | 'vitest' | 'playwright';
export type Outcome = 'passed' | 'failed' | 'skipped';

/** One test as the runner reports it: `file` relative to the fixture root (forward slashes), describes then title. */
export interface ExpectedTest {
  file: string;
  titlePath: string[];
  outcome: Outcome;
}

export interface RealSuite {
  runner: SuiteRunner;
  dir: string;
  /** Every test the runner runs, in file order; one deliberate pair (Jest, Vitest) has the same file and title path. */
  tests: ExpectedTest[];
}

/** The engine's mapping name of a test (the key of `casebridge.keys.json`). */
export const mappingName = (t: Pick<ExpectedTest, 'file' | 'titlePath'>): string =>
  [t.file, ...t.titlePath].join(' > ');

/** Where each runner writes its own JSON report, read back by `runnerResults` to check the generator. */
const REPORT = 'runner-results.json';

type Row = (string | number)[] | Record<string, number>;
type Node =
  | { kind: 'test'; title: string; outcome: Outcome }
  | { kind: 'each'; format: string; rows: Row[]; failing: number[] }
  | { kind: 'describe'; title: string; children: Node[] };

/** The title Jest and Vitest give a `test.each` row: `%s`/`%i` take the row's items in order, `%#` is the row index. */
function expand(format: string, row: Row, index: number): string {
  if (!Array.isArray(row)) return format.replace(/\$(\w+)/g, (_, name: string) => String(row[name]));
  let next = 0;
  return format.replace(/%[si#]/g, (m) => (m === '%#' ? String(index) : String(row[next++])));
}

// The folders: `utils` in eight of them, the rest nested up to four levels. Interleaved, so that a small suite (the
// first files only) still has several `utils` files.
const UTILS = ['a', 'b', 'c', 'lib', 'api', 'ui', 'ui/forms', 'shared/deep/nested'];
const OTHERS = [
  'api/users',
  'api/orders',
  'api/orders/checkout',
  'api/orders/refunds',
  'api/auth/login',
  'api/auth/tokens',
  'ui/forms/login',
  'ui/forms/signup',
  'ui/forms/validation',
  'ui/components/button',
  'ui/components/modal',
  'ui/components/table',
  'ui/pages/home',
  'ui/pages/search',
  'ui/pages/settings/profile',
  'ui/pages/settings/billing',
  'lib/dates',
  'lib/parser',
  'lib/strings',
  'lib/numbers',
  'lib/i18n/rtl',
  'lib/i18n/plural',
  'core/engine',
  'core/queue',
  'core/cache',
  'core/events',
  'integration/payments',
  'integration/email',
  'integration/webhooks',
  'e2e/smoke',
  'e2e/regression/issues',
  'legacy/compat',
];
const STEMS = OTHERS.flatMap((o, i) => (i % 4 === 0 && UTILS[i / 4] ? [`${UTILS[i / 4]}/utils`, o] : [o]));

/** Words of the ordinary titles: a real suite's bulk. */
const VERBS = [
  'renders',
  'validates',
  'saves',
  'loads',
  'rejects',
  'retries',
  'formats',
  'sorts',
  'filters',
  'exports',
];
const OBJECTS = [
  'the invoice list',
  'an empty cart',
  'a user profile',
  'the search box',
  'a paginated table',
  'the settings form',
  'an expired token',
  'a refund request',
  'the audit log',
  'a webhook payload',
  'the billing address',
  'a draft order',
];
const QUALIFIERS = ['', ' when offline', ' for an admin', ' after a reload', ' with a long name', ' in dark mode'];

/** Titles with the words and characters of JQL: each must survive a search the engine builds from it. */
const JQL = [
  'returns users AND orders',
  'matches admins OR owners',
  'lists issues ORDER BY created DESC',
  'excludes status NOT IN (Done, Closed)',
  'NOT IN (',
  "handles 'single quotes'",
  'handles "double quotes"',
  'keeps a back\\slash in C:\\temp\\file.txt',
  'ends with a backslash \\',
  'fuzzy ~match works',
  'wildcards * and ? in a query',
  'checkbox [x] is ticked',
  'template {y} is filled',
  'key: value pairs',
  'a - b - c with dashes',
  'summary ~ "quoted" AND labels = casebridge',
  'it\'s "mixed" \\ quotes',
  'AND',
  'OR',
  'a=1 && b!=2 || c<3',
];
const EMOJI = ['shows 🎉 when the order ships', '👍', 'family 👨‍👩‍👧‍👦 and flag 🇮🇱 render', 'waves 👋🏽 hello'];
const RTL = ['מציג את שם המשתמש', 'يعرض اسم المستخدم', 'mixed עברית and English 123', 'العربية ثم English'];

/** Two 300-character titles that differ only in their last characters (a summary is cut at 255). */
const LONG = ['A', 'B'].map((v) => {
  const head = 'describes the whole scenario in detail, as some teams write their titles, ';
  return `${head.repeat(5).slice(0, 288)} (variant ${v})`;
});

const EACH: Omit<Extract<Node, { kind: 'each' }>, 'kind' | 'failing'>[] = [
  {
    format: 'formats %s as %s',
    rows: [
      ['2026-01-31', 'Jan 31'],
      ['2026-02-28', 'Feb 28'],
      ['1999-12-31', 'Dec 31'],
      ['bad date', 'Invalid Date'],
    ],
  },
  {
    format: 'adds %i + %i = %i',
    rows: [
      [1, 2, 3],
      [2, 3, 5],
      [10, -4, 6],
    ],
  },
  {
    format: '$a × $b = $product',
    rows: [
      { a: 2, b: 3, product: 6 },
      { a: 4, b: 5, product: 20 },
    ],
  },
  { format: 'row %# parses %s', rows: [['a=1'], ['b=2'], ['c=3']] },
];

/** The tree of file `f`: the special titles its index selects, then ordinary ones up to `size` tests. */
function fileTree(f: number, size: number, runner: SuiteRunner, state: { forced: Map<string, Outcome>; g: number }) {
  // Special tests that must fail or be skipped do so once in the whole suite, where they first appear.
  const outcomeOf = (id: string): Outcome => {
    const o = state.forced.get(id);
    if (o) state.forced.delete(id);
    return o ?? 'passed';
  };
  const test = (title: string, id = ''): Node => ({ kind: 'test', title, outcome: outcomeOf(id) });
  const top: Node[] = [];
  const describes = new Map<string, Node[]>();
  const inside = (title: string): Node[] => {
    let children = describes.get(title);
    if (!children) {
      children = [];
      describes.set(title, children);
      top.push({ kind: 'describe', title, children });
    }
    return children;
  };

  // The same title in many files and, within a file, in several describe blocks.
  if (f % 2 === 0) top.push(test('renders'));
  if (f % 3 === 1) {
    inside('desktop').push(test('renders'));
    inside('mobile').push(test('renders'));
  }
  inside('edge cases').push(test('handles errors'));
  if (f % 4 === 3) top.push(test('works'));
  // Prefixes: a name that starts another one (`… > parses` and `… > parses dates`, or `… > parses > dates`).
  if (f % 4 === 0) inside('parser').push(test('parses', 'prefix'), test('parses dates'));
  if (f % 8 === 4) {
    top.push(test('parses'));
    inside('parses').push(test('dates'));
  }
  if (f % 4 === 2) top.push(test('clicks inside frame', 'frame'), test('clicks inside frame submits a single request'));
  // Empty titles, at the top and inside a describe block.
  if (f % 5 === 2) top.push(test(''));
  if (f % 5 === 4) inside('form').push(test('', 'empty'));
  // JQL words and characters, emoji, right-to-left text, 300-character titles.
  for (const i of [f, f + 7, f + 13]) {
    const title = JQL[i % JQL.length] as string;
    top.push(test(title, title === 'handles "double quotes"' ? 'quotes' : ''));
  }
  inside('i18n').push(test(EMOJI[f % EMOJI.length] as string, 'emoji'), test(RTL[f % RTL.length] as string, 'rtl'));
  if (f % 10 === 3) inside('long titles').push(...LONG.map((t) => test(t, 'long')));
  // Parametrised titles (Playwright has no test.each: the files loop over the rows, as Playwright projects do).
  if (f % 3 === 0) {
    const each = EACH[(f / 3) % EACH.length] as (typeof EACH)[number];
    const failing = outcomeOf(`each:${each.format}`) === 'failed' ? [each.rows.length - 1] : [];
    inside('parametrised').push({ kind: 'each', ...each, failing });
  }
  // A test copied and pasted under the same title: Jest and Vitest run both; Playwright refuses the file.
  if (f === 1 && runner !== 'playwright') top.push(test('is idempotent'), test('is idempotent'));

  // The bulk: ordinary titles, unique within the file, at the top, in a describe and in a nested describe.
  const used = new Set<string>();
  const nested: Node[] = [];
  inside('when signed in').push({ kind: 'describe', title: 'as an admin', children: nested });
  const containers = [top, inside('smoke'), inside('when signed in'), nested, inside('regressions')];
  const combos = VERBS.length * OBJECTS.length * QUALIFIERS.length;
  for (let k = 0, c = f * 37; count(top) < size; k++, c += 7) {
    if (used.size === combos) throw new Error(`realSuite: at most ${combos} ordinary tests fit in one file`);
    const n = c % combos;
    const verb = VERBS[n % VERBS.length];
    const object = OBJECTS[Math.floor(n / VERBS.length) % OBJECTS.length];
    const title = `${verb} ${object}${QUALIFIERS[Math.floor(n / (VERBS.length * OBJECTS.length))]}`;
    if (used.has(title)) continue;
    used.add(title);
    // About 1% fail and 1% are skipped, with the forced ones above.
    const g = state.g++;
    const outcome: Outcome = g % 150 === 75 ? 'failed' : g % 100 === 40 ? 'skipped' : 'passed';
    (containers[k % containers.length] as Node[]).push({ kind: 'test', title, outcome });
  }
  return prune(top);
}

/** Drops describe blocks left without tests (a small file fills only some). */
const prune = (nodes: Node[]): Node[] =>
  nodes.flatMap((n): Node[] => {
    if (n.kind !== 'describe') return [n];
    return count(n.children) > 0 ? [{ ...n, children: prune(n.children) }] : [];
  });

const count = (nodes: Node[]): number =>
  nodes.reduce((s, n) => s + (n.kind === 'test' ? 1 : n.kind === 'each' ? n.rows.length : count(n.children)), 0);

function flatten(file: string, nodes: Node[], path: string[], out: ExpectedTest[]): void {
  for (const n of nodes) {
    if (n.kind === 'describe') flatten(file, n.children, [...path, n.title], out);
    else if (n.kind === 'test') out.push({ file, titlePath: [...path, n.title], outcome: n.outcome });
    else {
      n.rows.forEach((row, i) => {
        const outcome = n.failing.includes(i) ? 'failed' : 'passed';
        out.push({ file, titlePath: [...path, expand(n.format, row, i)], outcome });
      });
    }
  }
}

const lit = (s: string) => JSON.stringify(s);

function render(nodes: Node[], runner: SuiteRunner, indent = ''): string {
  const describe = runner === 'playwright' ? 'test.describe' : 'describe';
  const lines: string[] = [];
  for (const n of nodes) {
    if (n.kind === 'describe') {
      lines.push(
        `${indent}${describe}(${lit(n.title)}, () => {`,
        render(n.children, runner, `${indent}  `),
        `${indent}});`,
      );
    } else if (n.kind === 'test') {
      if (n.outcome === 'skipped') lines.push(`${indent}test.skip(${lit(n.title)}, () => {});`);
      else if (n.outcome === 'failed')
        lines.push(`${indent}test(${lit(n.title)}, () => {`, `${indent}  expect(1).toBe(2);`, `${indent}});`);
      else lines.push(`${indent}test(${lit(n.title)}, () => {});`);
    } else if (runner === 'playwright') {
      const rows = n.rows.map((row, i) => [expand(n.format, row, i), n.failing.includes(i)]);
      lines.push(
        `${indent}for (const [title, fails] of ${JSON.stringify(rows)} as [string, boolean][]) {`,
        `${indent}  test(title, () => {`,
        `${indent}    if (fails) expect(1).toBe(2);`,
        `${indent}  });`,
        `${indent}}`,
      );
    } else {
      // The row decides whether it fails: the callback only sees the row, never its title.
      const width = Array.isArray(n.rows[0]) ? n.rows[0].length : 1;
      const failing = JSON.stringify(
        n.failing.map((i) => JSON.stringify(Array.isArray(n.rows[i]) ? n.rows[i] : [n.rows[i]])),
      );
      lines.push(
        `${indent}test.each(${JSON.stringify(n.rows)})(${lit(n.format)}, (...args) => {`,
        `${indent}  if (${failing}.includes(JSON.stringify(args.slice(0, ${width})))) expect(1).toBe(2);`,
        `${indent}});`,
      );
    }
  }
  return lines.join('\n');
}

const HEADER: Record<SuiteRunner, string> = {
  jest: '',
  vitest: "import { describe, expect, test } from 'vitest';\n\n",
  playwright: "import { expect, test } from '@playwright/test';\n\n",
};
const EXTENSION: Record<SuiteRunner, string> = { jest: '.test.js', vitest: '.test.ts', playwright: '.spec.ts' };

function configFiles(runner: SuiteRunner, options: Record<string, unknown>): Record<string, string> {
  const cb = `['@casebridge/${runner}', ${JSON.stringify(options)}]`;
  if (runner === 'jest') {
    return {
      'package.json': JEST_PACKAGE,
      'jest.config.js': jestConfig(options, "testMatch: ['<rootDir>/tests/**/*.test.js'],"),
    };
  }
  if (runner === 'vitest') {
    return {
      'vitest.config.mjs': `import { defineConfig } from 'vitest/config';
export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    reporters: ['dot', ['json', { outputFile: '${REPORT}' }], ${cb}],
  },
});
`,
    };
  }
  return {
    'playwright.config.ts': `import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: 'tests',
  outputDir: 'test-results',
  workers: 2,
  reporter: [['dot'], ['json', { outputFile: '${REPORT}' }], ${cb}],
});
`,
  };
}

/**
 * Writes the suite into `test/.fixtures/<name>` (emptied first) with the reporter configured with `options`, and
 * returns the tests the runner will report. `tests` is the suite's size (exact); files: 40 from 1,000 tests, about
 * one per 25 tests below that.
 */
export function realSuite(
  runner: SuiteRunner,
  name: string,
  { tests = 1000, options = {} }: { tests?: number; options?: Record<string, unknown> } = {},
): RealSuite {
  const fileCount = Math.min(STEMS.length, Math.max(4, Math.round(tests / 25)));
  const state = {
    forced: new Map<string, Outcome>([
      ['prefix', 'failed'],
      ['frame', 'failed'],
      ['quotes', 'failed'],
      ['empty', 'failed'],
      ['rtl', 'failed'],
      ['each:formats %s as %s', 'failed'],
      ['emoji', 'skipped'],
      ['long', 'skipped'],
    ]),
    g: 0,
  };
  const files: Record<string, string> = configFiles(runner, options);
  const expected: ExpectedTest[] = [];
  for (let f = 0; f < fileCount; f++) {
    const size = Math.floor(tests / fileCount) + (f < tests % fileCount ? 1 : 0);
    const file = `tests/${STEMS[f]}${EXTENSION[runner]}`;
    const tree = fileTree(f, size, runner, state);
    files[file] = `${HEADER[runner]}${render(tree, runner)}\n`;
    flatten(file, tree, [], expected);
  }
  return { runner, dir: fixture(name, files), tests: expected };
}

/** Runs the suite's runner in its folder (`args` added), with `env`, for up to 10 minutes. */
export function runRealSuite(
  suite: RealSuite,
  env: Record<string, string | undefined>,
  args: string[] = [],
): Promise<RunOutput> {
  const bin = join(ROOT, 'node_modules', '.bin', suite.runner);
  // Two workers, as the Playwright config says, unless the caller asks for other.
  const workers = args.some((a) => a.startsWith('--maxWorkers')) ? [] : ['--maxWorkers=2'];
  const command: Record<SuiteRunner, string[]> = {
    jest: ['--ci', ...workers, '--json', `--outputFile=${REPORT}`],
    vitest: ['run'],
    playwright: ['test'],
  };
  return run(bin, [...command[suite.runner], ...args], suite.dir, env, 600_000);
}

interface JestLikeReport {
  testResults: { name: string; assertionResults: { ancestorTitles: string[]; title: string; status: string }[] }[];
}
interface PwSuite {
  title: string;
  specs?: { title: string; file: string; tests: { status: string; results: { status: string }[] }[] }[];
  suites?: PwSuite[];
}

const posix = (p: string) => p.replace(/\\/g, '/');

/**
 * The tests the runner itself reported in its last run (its own JSON report), in the generator's terms: the check
 * that the harness runs what it generated, before anything is said about casebridge.
 */
export function runnerResults(suite: RealSuite): ExpectedTest[] {
  const path = join(suite.dir, REPORT);
  if (!existsSync(path)) throw new Error(`${suite.runner} wrote no ${REPORT} in ${suite.dir}`);
  const report: unknown = JSON.parse(readFileSync(path, 'utf8'));
  const out: ExpectedTest[] = [];
  if (suite.runner !== 'playwright') {
    for (const file of (report as JestLikeReport).testResults) {
      for (const a of file.assertionResults) {
        const outcome: Outcome = a.status === 'passed' ? 'passed' : a.status === 'failed' ? 'failed' : 'skipped';
        out.push({ file: posix(relative(suite.dir, file.name)), titlePath: [...a.ancestorTitles, a.title], outcome });
      }
    }
    return out;
  }
  const pw = report as { config: { rootDir: string }; suites: PwSuite[] };
  const walk = (s: PwSuite, path: string[]) => {
    for (const spec of s.specs ?? []) {
      for (const t of spec.tests) {
        const last = t.results.at(-1)?.status ?? t.status;
        const outcome: Outcome = last === 'passed' ? 'passed' : last === 'skipped' ? 'skipped' : 'failed';
        const file = posix(relative(suite.dir, resolve(pw.config.rootDir, spec.file)));
        out.push({ file, titlePath: [...path, spec.title], outcome });
      }
    }
    for (const child of s.suites ?? []) walk(child, [...path, child.title]);
  };
  // The top-level suites are the files: their titles are not part of a test's title path.
  for (const file of pw.suites) walk(file, []);
  return out;
}
