import { AmbiguousError, NotFoundError, ValidationError } from '../../client/errors.js';
import type { CasebridgeConfig } from '../config/schema.js';
import {
  ATTRIBUTE_VARIABLES,
  attributeSet,
  attributeValuesOf,
  describeSet,
  NO_VALUE,
  parseRunKey,
  runKey,
  unknownVariables,
} from '../kernel/attributes.js';
import { AttributeSetRefused } from '../kernel/errors.js';
import { answerOf } from '../kernel/split.js';
import type { CycleInfo, PlannedTest } from '../kernel/types.js';
import type { Target } from '../kernel/work.js';
import type { DeliveryService } from './compose.js';

/** Keys per createTestRuns request, which makes keys × sets runs: 100 keys on three browsers are 300 runs. */
export const CREATE_RUNS_KEYS = 100;

/**
 * A planned test's attribute set when the plan knows it, so begin makes the runs at once. What only the test's run
 * gives (`${param.…}`) is not guessed: a wrong guess leaves a run no result has.
 */
export function plannedSet(test: PlannedTest, templates: Record<string, string>): Record<string, string> | undefined {
  for (const template of Object.values(templates)) {
    if (template.includes('${param.')) return undefined;
    for (const m of template.matchAll(/\$\{annotation:([^}]+)\}/g)) {
      if (!test.annotations.some((a) => a.type === m[1] && a.description)) return undefined;
    }
  }
  const set = attributeSet(attributeValuesOf({ ...test, attempts: [] }, templates));
  return Object.keys(set).length > 0 ? set : undefined;
}

/** The runs of an advanced cycle (option `attributes`): created with createTestRuns, one per case and attribute set. */
export class AttributedRuns {
  /** Attribute sets the service refused (a value the project does not define), by run-key set text. */
  private readonly refused = new Map<string, AttributeSetRefused>();
  /** Cycles (by id) whose createTestRuns answered 500 once already in this run. */
  private readonly cycleFailed = new Set<number>();

  constructor(
    private readonly svc: DeliveryService,
    /** The configured attribute names: each set is sent with all of them (`-` for no value); may be empty. */
    private readonly names: readonly string[],
    /** Keys the service refused as test cases (shared with CycleRuns). */
    private readonly badKeys: Set<string>,
    /** Adds keys to the plan (CycleRuns.addPlanMembers): a case outside the plan gets no run. */
    private readonly addToPlan: (plan: string, keys: string[]) => Promise<void>,
  ) {}

  /** Why the run of this run key cannot be created (its attribute set was refused); undefined: it can. */
  refusalOf(key: string): AttributeSetRefused | undefined {
    const { set } = parseRunKey(key);
    return set ? this.refused.get(JSON.stringify(set)) : undefined;
  }

  /**
   * Creates the missing runs, one request per 100 cases; answers whether the run list must be read again (a run
   * existed, or an answer was lost). A transient failure throws.
   */
  async create(cycle: CycleInfo, runs: Map<string, number>, runKeys: readonly string[]): Promise<boolean> {
    const casesOf = new Map<string, Set<string>>();
    for (const rk of runKeys) {
      const { key, set } = parseRunKey(rk);
      if (!set || runs.has(rk) || this.badKeys.has(key)) continue;
      const text = JSON.stringify(set);
      if (this.refused.has(text)) continue;
      if (Object.keys(set).length === 0) {
        this.refuse(set, 'no attribute of option `attributes` gives a value for this test (every template is empty)');
        continue;
      }
      const cases = casesOf.get(text) ?? new Set<string>();
      cases.add(key);
      casesOf.set(text, cases);
    }
    // Sets wanted by the same cases go in one request (the service creates every case × every set of a request).
    const groups = new Map<string, { keys: string[]; sets: Record<string, string>[] }>();
    for (const [text, cases] of casesOf) {
      const keys = [...cases].sort();
      const g = groups.get(keys.join(',')) ?? { keys, sets: [] };
      g.sets.push(JSON.parse(text) as Record<string, string>);
      groups.set(keys.join(','), g);
    }
    let reread = false;
    for (const { keys, sets } of groups.values()) {
      for (let i = 0; i < keys.length; i += CREATE_RUNS_KEYS) {
        const part = keys.slice(i, i + CREATE_RUNS_KEYS);
        if (await this.send(cycle, runs, part, sets, true)) reread = true;
      }
    }
    return reread;
  }

  /** One createTestRuns request; `retry`: cases outside the plan are added to it and sent once more. */
  private async send(
    cycle: CycleInfo,
    runs: Map<string, number>,
    keys: string[],
    sets: Record<string, string>[],
    retry: boolean,
  ): Promise<boolean> {
    const input = {
      testCaseKeys: keys.join(','),
      cycleId: String(cycle.id),
      attributeValues: sets.map((s) => this.object(s)),
    };
    let answer: Awaited<ReturnType<DeliveryService['tm']['cycles']['createTestRuns']>>;
    try {
      answer = await this.svc.inCycle(cycle).cycles.createTestRuns(input, this.svc.o);
    } catch (err) {
      // The spec's 404 for an unknown attribute value: each set alone finds the one the project does not define.
      if (err instanceof NotFoundError) {
        if (sets.length > 1) {
          let reread = false;
          for (const set of sets) if (await this.send(cycle, runs, keys, [set], retry)) reread = true;
          return reread;
        }
        this.refuse(sets[0] as Record<string, string>, answerOf(err));
        return false;
      }
      // The answer was lost: the run list read next shows what was created; what was not is asked for again.
      if (err instanceof AmbiguousError) return true;
      if (err instanceof ValidationError && !cycle.created) {
        // A normal cycle of the same name refuses runs with attributes every time: a 500 twice is taken as that.
        if (this.cycleFailed.has(cycle.id)) {
          const answer = answerOf(err);
          for (const set of sets) this.refuse(set, answer, this.cycleLine(cycle, answer));
          return err.mayHaveApplied;
        }
        this.cycleFailed.add(cycle.id);
      }
      throw err;
    }
    for (const run of answer.createdRuns) runs.set(runKey(run.testCaseKey, run.attributeValues), run.id);
    let reread = false;
    const outside: string[] = [];
    for (const e of answer.errors) {
      const set = e.attributeSet === undefined ? undefined : sets[e.attributeSet];
      if (set && e.testCaseKey === undefined) this.refuse(set, e.message);
      else if (set)
        reread = true; // the case has a run with this set already: the list names its id
      else if (e.testCaseKey !== undefined) outside.push(e.testCaseKey);
    }
    if (outside.length > 0) {
      if (!retry) for (const key of outside) this.badKeys.add(key);
      else {
        await this.addToPlan(cycle.plan, outside);
        const left = outside.filter((key) => !this.badKeys.has(key));
        if (left.length > 0 && (await this.send(cycle, runs, left, sets, false))) reread = true;
      }
    }
    return reread;
  }

  /** The attributeValues object of a set: every configured attribute, `-` where the set has no value. */
  private object(set: Record<string, string>): Record<string, string> {
    const out: Record<string, string> = {};
    // A result journaled with attributes, replayed by a run without the option: the names its set has.
    const names = this.names.length > 0 ? this.names : Object.keys(set);
    for (const name of names) out[name] = set[name] ?? NO_VALUE;
    // The spec: when the project has exactly one run attribute, the object carries it plus the pair `-`: `-`.
    if (names.length === 1) out[NO_VALUE] = NO_VALUE;
    return out;
  }

  /** The summary's line for a cycle that refuses runs with attributes (see send). */
  private cycleLine(cycle: CycleInfo, answer: string): string {
    return (
      `test cycle "${cycle.name}" of ${cycle.plan} refused the runs of option \`attributes\` twice (${answer}): a ` +
      'cycle created without run attributes (a normal cycle, e.g. by a run of the same cycle name before ' +
      '`attributes` was set) cannot hold them. Report into another cycle (option `cycle`); the results are kept in ' +
      'the journal, marked, and `casebridge replay` delivers them once the cycle takes them'
    );
  }

  private refuse(set: Record<string, string>, answer: string, cycleLine?: string): void {
    const text = JSON.stringify(set);
    if (this.refused.has(text)) return;
    const named = describeSet(set);
    const line =
      cycleLine ??
      `run attributes ${named}: the service refused this attribute set (${answer}); the results reported with it ` +
        'are kept in the journal, marked. Define the value in synapseRT (Project settings → synapseRT → Run ' +
        "Attributes, the attribute's values) or change option `attributes`; then `casebridge replay` (or the next run) " +
        'delivers them';
    this.refused.set(text, new AttributeSetRefused(`run attributes ${named} refused: ${answer}`, answer, line));
  }
}

/** What is wrong with the `attributes` option for this target, one line each (said once, in the summary). */
export function attributeProblems(config: CasebridgeConfig, target: Target): string[] {
  const out: string[] = [];
  if (config.attributes && target.mode !== 'cycle') {
    out.push('attributes: run attributes need cycle mode (mode cycle); in ad hoc mode they are ignored');
  }
  for (const [name, template] of Object.entries(config.attributes ?? {})) {
    for (const v of unknownVariables(template)) {
      out.push(
        `attributes.${name}: ${v} is not a variable of a run attribute template (${ATTRIBUTE_VARIABLES}); it is sent as written`,
      );
    }
  }
  return out;
}
