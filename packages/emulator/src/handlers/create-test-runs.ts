import { createRun, ISSUE_TYPES, issueByKey, userByName } from '../rules/domain.js';
import { type Handler, idf, invalid, notFound } from '../service/context.js';
import type { Issue, Run, RunAttribute, Store } from '../store/store.js';
import { assertCycleOpen, commaList, unique } from './cycles.js';

/**
 * createTestRuns: the runs of an advanced cycle, one per test case and attribute set. It answers
 * `{createdRuns, errors}` (see `cycles.createTestRuns` in the contract): an attribute set or a case that yields no
 * run is an entry of `errors`, and the others are created all the same. The spec's 404 (an unknown case key,
 * cycle id or attribute value) is kept for a request of which nothing could be created for that reason: an unknown
 * cycle, every key unknown, or an unknown value in every attribute set. One bad key or set among good ones must not
 * cost a reporter the runs it could have had.
 */

/** A validated attribute set of createTestRuns. */
interface AttributeSet {
  index: number;
  given: Record<string, string>;
  attributes: Record<string, string>;
  urgency: string | null;
  tester: string | null;
}

const sameAttributes = (a: Record<string, string> | null, b: Record<string, string>): boolean => {
  const x = a ?? {};
  const keys = Object.keys(x);
  return keys.length === Object.keys(b).length && keys.every((k) => x[k] === b[k]);
};

/** Why an attribute set yields no runs; `unknownValue` marks the sets the spec answers with 404 when all are. */
interface SetError {
  message: string;
  unknownValue: boolean;
}

/** Reads one attributeValues object of createTestRuns: the set, or why it yields no runs (a partial failure). */
function readAttributeSet(
  store: Store,
  defs: readonly RunAttribute[],
  earlier: readonly AttributeSet[],
  given: Record<string, string>,
  index: number,
  urgency: string,
  assignee: string,
): AttributeSet | SetError {
  const attributes: Record<string, string> = {};
  const unknownNames: string[] = [];
  const unknownValues: string[] = [];
  for (const [name, value] of Object.entries(given)) {
    // `-: -` pads the object when the project has one attribute; a `-` value means "no value".
    if (name === '-' || value === '-') continue;
    const def = defs.find((d) => d.name === name);
    if (!def) {
      unknownNames.push(name);
      continue;
    }
    if (!def.values.includes(value)) {
      unknownValues.push(
        `Run attribute value "${value}" not found for attribute ${name}: expected one of ${def.values.join(', ')}`,
      );
      continue;
    }
    attributes[name] = value;
  }
  if (unknownNames.length || unknownValues.length) {
    const known = defs.map((d) => d.name).join(', ') || 'none';
    const names = unknownNames.length
      ? [`Unknown run attribute ${unknownNames.map((n) => `"${n}"`).join(', ')}: the project has ${known}`]
      : [];
    return { message: [...unknownValues, ...names].join('; '), unknownValue: unknownValues.length > 0 };
  }
  const fail = (message: string): SetError => ({ message, unknownValue: false });
  if (!Object.keys(attributes).length) return fail('The attribute set gives no attribute value (all are "-")');
  if (earlier.some((v) => sameAttributes(v.attributes, attributes))) {
    return fail('The same attribute values are given by an earlier attribute set');
  }
  let tester: string | null = null;
  if (assignee !== '' && assignee.toLowerCase() !== 'unassigned') {
    const user = userByName(store, assignee);
    if (!user) return fail(`Tester "${assignee}" (assignValue) is not a user`);
    tester = user.name;
  }
  return {
    index,
    given,
    attributes,
    tester,
    urgency: urgency === '' || urgency.toLowerCase() === 'null' ? null : urgency,
  };
}

export const createTestRunsHandlers: Record<string, Handler> = {
  'cycles.createTestRuns': (ctx) => {
    const { store } = ctx;
    const b = ctx.body as {
      testCaseKeys: string;
      cycleId: string;
      attributeValues: Record<string, string>[];
      urgencyValue?: string;
      assignValue?: string;
    };
    const cycle = store.cycles.get(Number(b.cycleId));
    if (!cycle || cycle.tpId === null) throw notFound(`Test cycle ${b.cycleId} not found`);
    const tp = store.issues.get(cycle.tpId);
    if (!tp) throw notFound(`Test plan of test cycle ${b.cycleId} not found`);
    if (!cycle.advanced) {
      throw invalid(
        `Test cycle "${cycle.name}" is not an advanced cycle: run attributes need a cycle created with ` +
          'testCycleType Advanced (add runs to this one with addMembersToTestCycle)',
        'cycleId',
      );
    }
    assertCycleOpen(cycle);

    const keys = unique(commaList(b.testCaseKeys).filter(Boolean));
    if (!keys.length) throw invalid('TestCaseId is Mandatory', 'testCaseKeys');

    const sets = b.attributeValues;
    const perSet = (field: 'urgencyValue' | 'assignValue'): string[] => {
      const raw = b[field];
      if (raw === undefined || raw.trim() === '') return sets.map(() => '');
      const entries = commaList(raw);
      if (entries.length !== sets.length) {
        throw invalid(
          `${field} has ${entries.length} entries, expected one per attributeValues object (${sets.length})`,
          field,
        );
      }
      return entries;
    };
    // Entry i belongs to attribute set i, whether that set yields runs or not.
    const urgencies = perSet('urgencyValue');
    const assignees = perSet('assignValue');

    // Every input is checked before the first run is created, so that a 404 leaves nothing half created.
    const members = new Set(store.planMembers.filter((m) => m.tpId === tp.id).map((m) => m.tcId));
    const caseErrors: Record<string, unknown>[] = [];
    const inPlan: Issue[] = [];
    let knownCases = 0;
    for (const key of keys) {
      const issue = issueByKey(store, key);
      if (issue?.type !== ISSUE_TYPES.testCase) {
        const message = issue ? `${key} is a ${issue.type}, not a Test Case` : `Test Case ${key} not found`;
        caseErrors.push({ message, testCaseKey: key });
        continue;
      }
      knownCases += 1;
      if (members.has(issue.id)) inPlan.push(issue);
      else caseErrors.push({ message: `Test case ${key} is not a member of test plan ${tp.key}`, testCaseKey: key });
    }
    if (!knownCases) {
      throw notFound(`${caseErrors.map((e) => e.message).join('; ')}: no run could be created (testCaseKeys)`);
    }

    const defs = store.runAttributes.filter((a) => a.projectId === tp.projectId);
    const errors: Record<string, unknown>[] = [];
    const valid: AttributeSet[] = [];
    let unknownValueSets = 0;
    sets.forEach((given, index) => {
      const set = readAttributeSet(store, defs, valid, given, index, urgencies[index] ?? '', assignees[index] ?? '');
      if ('message' in set) {
        if (set.unknownValue) unknownValueSets += 1;
        errors.push({ message: set.message, attributeSet: index, attributeValues: given });
      } else valid.push(set);
    });
    if (unknownValueSets === sets.length) {
      const each = errors.map((e) => `attribute set ${e.attributeSet}: ${e.message}`).join('; ');
      throw notFound(`${each}: no run could be created (attributeValues)`);
    }
    errors.push(...caseErrors);

    const existing = store.runs.filter((r) => r.cycleId === cycle.id);
    const created: Run[] = [];
    for (const set of valid) {
      for (const tc of inPlan) {
        if (existing.some((r) => r.tcId === tc.id && sameAttributes(r.attributes, set.attributes))) {
          errors.push({
            message: `Test case ${tc.key} already has a run with these attribute values in test cycle "${cycle.name}"`,
            attributeSet: set.index,
            attributeValues: set.given,
            testCaseKey: tc.key,
          });
          continue;
        }
        created.push(
          createRun(ctx, cycle, tc.id, { attributes: set.attributes, tester: set.tester, urgency: set.urgency }),
        );
      }
    }
    return {
      createdRuns: created.map((r) => {
        const tc = store.issues.get(r.tcId);
        return {
          ...idf(ctx.variant, r.id),
          testCaseKey: tc?.key ?? '',
          summary: tc?.summary ?? '',
          status: r.status,
          testerName: r.tester ?? '',
          urgency: r.urgency,
          attributeValues: r.attributes ?? {},
        };
      }),
      errors,
    };
  },
};
