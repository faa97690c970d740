import { type Handler, idf, invalid, notFound } from '../context.js';
import { createRun, ISSUE_TYPES, requireIssue, userByName } from '../domain.js';
import type { Run, RunAttribute, Store } from '../store.js';
import { assertCycleOpen, commaList, unique } from './cycles.js';

/**
 * createTestRuns: the runs of an advanced cycle, one per test case and attribute set. It answers
 * `{createdRuns, errors}` (see `cycles.createTestRuns` in the contract): an attribute set or a case that yields no
 * run is an entry of `errors`, and the others are created all the same.
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

/**
 * Reads one attributeValues object of createTestRuns: the set, or the message of why it yields no runs (a partial
 * failure). An attribute value the project does not define is a 404 for the whole request.
 */
function readAttributeSet(
  store: Store,
  defs: readonly RunAttribute[],
  earlier: readonly AttributeSet[],
  given: Record<string, string>,
  index: number,
  urgency: string,
  assignee: string,
): AttributeSet | string {
  const attributes: Record<string, string> = {};
  const unknownNames: string[] = [];
  for (const [name, value] of Object.entries(given)) {
    // `-: -` pads the object when the project has one attribute; a `-` value means "no value".
    if (name === '-' || value === '-') continue;
    const def = defs.find((d) => d.name === name);
    if (!def) {
      unknownNames.push(name);
      continue;
    }
    if (!def.values.includes(value)) {
      throw notFound(
        `Run attribute value "${value}" not found for attribute ${name} (attribute set ${index}): expected one of ${def.values.join(', ')}`,
      );
    }
    attributes[name] = value;
  }
  if (unknownNames.length) {
    const known = defs.map((d) => d.name).join(', ') || 'none';
    return `Unknown run attribute ${unknownNames.map((n) => `"${n}"`).join(', ')}: the project has ${known}`;
  }
  if (!Object.keys(attributes).length) return 'The attribute set gives no attribute value (all are "-")';
  if (earlier.some((v) => sameAttributes(v.attributes, attributes))) {
    return 'The same attribute values are given by an earlier attribute set';
  }
  let tester: string | null = null;
  if (assignee !== '' && assignee.toLowerCase() !== 'unassigned') {
    const user = userByName(store, assignee);
    if (!user) return `Tester "${assignee}" (assignValue) is not a user`;
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
    const cases = keys.map((k) => requireIssue(store, k, ISSUE_TYPES.testCase));

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
    const urgencies = perSet('urgencyValue');
    const assignees = perSet('assignValue');

    const defs = store.runAttributes.filter((a) => a.projectId === tp.projectId);
    const errors: Record<string, unknown>[] = [];
    const valid: AttributeSet[] = [];
    // First every input is checked, so that a 404 (unknown value) leaves nothing half created.
    sets.forEach((given, index) => {
      const set = readAttributeSet(store, defs, valid, given, index, urgencies[index] ?? '', assignees[index] ?? '');
      if (typeof set === 'string') errors.push({ message: set, attributeSet: index, attributeValues: given });
      else valid.push(set);
    });

    const members = new Set(store.planMembers.filter((m) => m.tpId === tp.id).map((m) => m.tcId));
    const inPlan = cases.filter((tc) => {
      if (members.has(tc.id)) return true;
      errors.push({ message: `Test case ${tc.key} is not a member of test plan ${tp.key}`, testCaseKey: tc.key });
      return false;
    });
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
