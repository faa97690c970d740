import type { CasebridgeConfig } from '../config/schema.js';
import { type CoverageState, requirementCoverage } from './coverage.js';
import { type CycleDigest, cycleRead, type Failure, type Reader } from './results.js';

/**
 * The quality gate of a cycle: `gateCycle` reads, `judge` (pure) decides, each rule with its figure and verdict.
 * `maxNew` counts new, flaky and unclassified failures (known and quarantined too if `strict`).
 */

export interface GateRules {
  maxNew: number;
  maxRegressions: number;
  minPassRate?: number;
  requireAllPlanned?: boolean;
  requireAttributes?: Record<string, string[]>;
  strict?: boolean;
  /** Every requirement of the set covered by a case, or covered and passing (query/coverage.ts). */
  requirements?: 'covered' | 'passing';
  /** The requirements the rule judges; default: the project's requirements linked to a case of the cycle. */
  requirementsJql?: string;
}

export const DEFAULT_RULES: GateRules = { maxNew: 0, maxRegressions: 0 };

/**
 * The rules of a gate: the configuration's (option `gate`), overridden by each one asked for (CLI flag, MCP argument).
 */
export function rulesOf(configured: CasebridgeConfig['gate'], asked: Partial<GateRules> = {}): GateRules {
  const minPassRate = asked.minPassRate ?? configured.minPassRate;
  const requireAttributes = asked.requireAttributes ?? configured.requireAttributes;
  return {
    maxNew: asked.maxNew ?? configured.maxNew,
    maxRegressions: asked.maxRegressions ?? configured.maxRegressions,
    ...(minPassRate !== undefined ? { minPassRate } : {}),
    ...((asked.requireAllPlanned ?? configured.requireAllPlanned) ? { requireAllPlanned: true } : {}),
    ...(requireAttributes ? { requireAttributes } : {}),
    ...((asked.strict ?? configured.strict) ? { strict: true } : {}),
    ...((asked.requirements ?? configured.requirements)
      ? { requirements: (asked.requirements ?? configured.requirements) as 'covered' | 'passing' }
      : {}),
    ...((asked.requirementsJql ?? configured.requirementsJql)
      ? { requirementsJql: (asked.requirementsJql ?? configured.requirementsJql) as string }
      : {}),
  };
}

export interface GateInput {
  failures: readonly Failure[];
  /** The cycle's runs: case key, whether it has a result, its attribute values. */
  runs: ReadonlyArray<{ key: string; decided: boolean; passed: boolean; attributes?: Record<string, string> }>;
  /** The plan's case keys (for `requireAllPlanned`). */
  planned?: readonly string[];
  /** The requirements and their coverage state (for `requirements`). */
  requirements?: ReadonlyArray<{ key: string; summary: string; state: CoverageState }>;
}

export interface RuleVerdict {
  rule: string;
  /** What was measured, as a person reads it (`2 new: DEMO-4, DEMO-7`). */
  figure: string;
  pass: boolean;
}

export interface GateVerdict {
  pass: boolean;
  rules: RuleVerdict[];
  passRate?: number;
  waived: number;
}

const NAMED = 10;
const named = (keys: readonly string[]) =>
  keys.length === 0
    ? ''
    : `: ${keys.slice(0, NAMED).join(', ')}${keys.length > NAMED ? ` and ${keys.length - NAMED} more` : ''}`;

export function judge(input: GateInput, rules: GateRules): GateVerdict {
  const out: RuleVerdict[] = [];
  const waivable = new Set(['known', 'quarantined']);
  const counted = input.failures.filter((f) => rules.strict || !waivable.has(f.classification));
  const isNew = counted.filter((f) => f.classification !== 'regression');
  const regressions = counted.filter((f) => f.classification === 'regression');
  // Named with their titles (`DEMO-14 shows banner`): a reader needs the test, not only its key.
  const keys = (fs: readonly Failure[]) => [...new Set(fs.map((f) => `${f.key}${f.title ? ` ${cut(f.title)}` : ''}`))];
  // A case fails once per attribute set (a browser, a device): `3 new in 2 cases` then names the 2.
  const cases = (fs: readonly Failure[]) => {
    const k = keys(fs);
    return k.length === fs.length ? named(k) : ` in ${k.length} case${k.length === 1 ? '' : 's'}${named(k)}`;
  };
  out.push({
    rule: `new failures ≤ ${rules.maxNew}${rules.strict ? ' (strict: known and quarantined count)' : ''}`,
    figure: `${isNew.length} new${cases(isNew)}`,
    pass: isNew.length <= rules.maxNew,
  });
  out.push({
    rule: `regressions ≤ ${rules.maxRegressions}`,
    figure: `${regressions.length}${cases(regressions)}`,
    pass: regressions.length <= rules.maxRegressions,
  });
  const decided = input.runs.filter((r) => r.decided);
  const passRate = decided.length > 0 ? (100 * decided.filter((r) => r.passed).length) / decided.length : undefined;
  if (rules.minPassRate !== undefined) {
    out.push({
      rule: `pass rate ≥ ${rules.minPassRate}%`,
      figure: passRate === undefined ? 'no run has a result' : `${round(passRate)}% of ${decided.length} runs`,
      pass: passRate !== undefined && passRate >= rules.minPassRate,
    });
  }
  if (rules.requireAllPlanned) {
    const ran = new Set(decided.map((r) => r.key));
    const missing = (input.planned ?? []).filter((k) => !ran.has(k));
    out.push({
      rule: 'every planned case ran',
      figure: `${(input.planned ?? []).length - missing.length} of ${(input.planned ?? []).length}${
        missing.length ? `; not run${named(missing)}` : ''
      }`,
      pass: missing.length === 0,
    });
  }
  if (rules.requirements) {
    const all = input.requirements ?? [];
    const ok: readonly CoverageState[] =
      rules.requirements === 'covered' ? ['passing', 'failing', 'not run'] : ['passing'];
    const bad = all.filter((x) => !ok.includes(x.state));
    out.push({
      rule: `every requirement ${rules.requirements}${rules.requirementsJql ? ` (${rules.requirementsJql})` : ''}`,
      figure: bad.length
        ? `${bad.length} of ${all.length}: ${bad
            .slice(0, NAMED)
            .map((x) => `${x.key} ${cut(x.summary)} (${x.state})`)
            .join(', ')}${bad.length > NAMED ? ` and ${bad.length - NAMED} more` : ''}`
        : `all ${all.length} ${rules.requirements === 'covered' ? 'covered' : 'passing'}`,
      pass: bad.length === 0,
    });
  }
  for (const [name, values] of Object.entries(rules.requireAttributes ?? {})) {
    const seen = new Set(decided.map((r) => r.attributes?.[name]).filter((v): v is string => v !== undefined));
    const missing = values.filter((v) => !seen.has(v));
    out.push({
      rule: `${name} ${values.join(', ')} each ran`,
      figure: missing.length ? `no run with a result for ${missing.join(', ')}` : `all ${values.length} ran`,
      pass: missing.length === 0,
    });
  }
  return {
    pass: out.every((r) => r.pass),
    rules: out,
    ...(passRate !== undefined ? { passRate: round(passRate) } : {}),
    waived: input.failures.length - counted.length,
  };
}

const cut = (s: string) => (s.length > 60 ? `${s.slice(0, 59)}…` : s);
const round = (n: number) => Math.round(n * 10) / 10;

/** The gate as Markdown for a CI job summary: verdict, rules, and the plan's recent pass rates as a Mermaid chart. */
export function gateMarkdown(
  v: GateVerdict,
  where: { plan: string; cycle: string; url: string },
  trend: ReadonlyArray<{ name: string; passRate?: number }>,
): string {
  const lines = [
    `## casebridge gate: ${v.pass ? '✅ passed' : '❌ failed'}`,
    '',
    `Cycle [${escapeMd(where.cycle)}](${where.url}) of test plan ${where.plan}${
      v.waived ? ` (${v.waived} known or quarantined failure(s) waived)` : ''
    }.`,
    '',
    '| rule | figure | verdict |',
    '|---|---|---|',
    ...v.rules.map((r) => `| ${escapeMd(r.rule)} | ${escapeMd(r.figure)} | ${r.pass ? 'pass' : '**fail**'} |`),
  ];
  const points = trend.filter((t) => t.passRate !== undefined);
  if (points.length >= 2) {
    lines.push(
      '',
      '```mermaid',
      'xychart-beta',
      `  title "Pass rate of the last ${points.length} cycles of ${where.plan}"`,
      `  x-axis [${points.map((p) => JSON.stringify(p.name.replace(/"/g, "'").slice(0, 24))).join(', ')}]`,
      '  y-axis "pass rate (%)" 0 --> 100',
      `  line [${points.map((p) => round(p.passRate as number)).join(', ')}]`,
      '```',
    );
  }
  return `${lines.join('\n')}\n`;
}

const escapeMd = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** A cycle's runs by result: `notRun` have none yet (Not Tested, or a status statusMap does not map). */
export interface Tally {
  total: number;
  passed: number;
  failed: number;
  notRun: number;
}

/** The gate of a cycle: 2 requests (3 with `requireAllPlanned`), the failures as the reporters classified them. */
export async function gateCycle(
  r: Reader,
  plan: string,
  ref: string,
  rules: GateRules,
): Promise<{ cycle: CycleDigest; failures: Failure[]; verdict: GateVerdict; tally: Tally }> {
  const read = await cycleRead(r, plan, ref);
  const planned = rules.requireAllPlanned
    ? (await r.tm.plans.members({ testPlanIssueKey: plan }, r.signal ? { signal: r.signal } : undefined)).map(
        (m) => m.testCaseKey,
      )
    : undefined;
  const runs = read.runs.map((run) => {
    const result = read.resultOf(run.status);
    return {
      key: run.testCaseKey,
      decided: result !== undefined,
      passed: result === 'passed',
      ...(run.attributeValues ? { attributes: run.attributeValues } : {}),
    };
  });
  const requirements = rules.requirements
    ? (
        await requirementCoverage(r, plan, `#${read.cycle.id}`, plan.replace(/-\d+$/, ''), {
          ...(rules.requirementsJql ? { jql: rules.requirementsJql } : {}),
          limit: 500,
        })
      ).requirements
    : undefined;
  const verdict = judge(
    { failures: read.failures, runs, ...(planned ? { planned } : {}), ...(requirements ? { requirements } : {}) },
    rules,
  );
  const passed = runs.filter((x) => x.passed).length;
  const decided = runs.filter((x) => x.decided).length;
  const tally = { total: runs.length, passed, failed: decided - passed, notRun: runs.length - decided };
  return { cycle: read.cycle, failures: read.failures, verdict, tally };
}
