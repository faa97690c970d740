import { issueRef } from '../rules/domain.js';
import { ensureSuitePath, parseSuitePath, suiteNames, suitePathOf } from '../rules/suite-path.js';
import { type Handler, invalid, notFound } from '../service/context.js';
import type { Cycle, Issue, Store, TestSuite } from '../store/store.js';

/**
 * Handlers of the test suite operations (group `suites`) and of the build / environment defect queries.
 *
 * Choices where the spec is silent (listed in the package README):
 * - createTestSuite answers the canonical path (each name trimmed, outer `/` dropped, `/` in a name written `\/`)
 *   and the project's key; an unknown project is a 500 validation error naming `projectKey`, since no 404 is
 *   documented for it.
 * - The suite list is flat: every level of the project's tree, in tree order; `nameEncoded` is the escaped path.
 * - A suite's detail lists its own test cases (memberType 1), not those of its sub-suites, and not the sub-suites.
 * - The defect queries match the build / environment name exactly, across every test plan's cycles.
 */

/** The longest suite name the service keeps (Jira's limit for a name field). */
const MAX_SUITE_NAME = 255;

/** memberType of a test case in a suite's member list. */
const TEST_CASE_MEMBER = 1;

/** state of every suite: the service has no other state for a suite that exists. */
const ACTIVE_STATE = 1;

function presentSuite(store: Store, suite: TestSuite) {
  return {
    name: suite.name,
    state: ACTIVE_STATE,
    id: suite.id,
    projectId: suite.projectId,
    nameEncoded: suitePathOf(store, suite),
  };
}

/** Orders paths as a tree is read: a parent before its children, siblings by name. */
function compareNames(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    const x = a[i] as string;
    const y = b[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** The defects linked to runs, or to steps of runs, of these cycles: once each, by issue id. */
function defectsOfCycles(store: Store, cycles: readonly Cycle[]): Issue[] {
  const cycleIds = new Set(cycles.map((c) => c.id));
  const found = new Map<number, Issue>();
  for (const link of store.bugLinks.all()) {
    const run = store.runs.get(link.runId);
    if (!run || !cycleIds.has(run.cycleId)) continue;
    const issue = store.issues.get(link.issueId);
    if (issue) found.set(issue.id, issue);
  }
  return [...found.values()].sort((a, b) => a.id - b.id);
}

/** The cycles of test plans (ad hoc cycles have neither build nor environment) whose field equals `name`. */
function cyclesWith(store: Store, field: 'build' | 'environment', name: string): Cycle[] {
  return store.cycles.filter((c) => c.tpId !== null && c[field] === name);
}

export const suitesHandlers: Record<string, Handler> = {
  'testSuites.create': (ctx) => {
    const { store } = ctx;
    const b = ctx.body as { testSuitePath: string; projectKey: string };
    const names = parseSuitePath(b.testSuitePath);
    const long = names.find((n) => n.length > MAX_SUITE_NAME);
    if (long !== undefined) {
      throw invalid(
        `testSuitePath has a suite name of ${long.length} characters; a name has at most ${MAX_SUITE_NAME}`,
        'testSuitePath',
      );
    }
    const project = store.projects.find((p) => p.key === b.projectKey);
    if (!project) {
      throw invalid(
        `Project "${b.projectKey}" not found: projectKey must be the key of an existing project`,
        'projectKey',
      );
    }
    const { suite } = ensureSuitePath(store, project.id, names);
    return { testSuitePath: suitePathOf(store, suite), projectKey: project.key };
  },

  'testSuites.list': (ctx) => {
    const { store } = ctx;
    const project = store.projects.find((p) => p.key === ctx.params.projectKey);
    if (!project) throw notFound(`Project ${ctx.params.projectKey} not found`);
    return store.testSuites
      .filter((s) => s.projectId === project.id)
      .map((s) => ({ suite: s, names: suiteNames(store, s) }))
      .sort((a, b) => compareNames(a.names, b.names) || a.suite.id - b.suite.id)
      .map(({ suite }) => presentSuite(store, suite));
  },

  'testSuites.get': (ctx) => {
    const { store } = ctx;
    const suite = store.testSuites.get(ctx.params.suiteId);
    if (!suite) throw notFound(`Test suite ${ctx.params.suiteId} not found`);
    const members = store.testSuiteMembers
      .filter((m) => m.suiteId === suite.id)
      .sort((a, b) => a.seq - b.seq || a.id - b.id)
      .flatMap((m) => {
        const tc = store.issues.get(m.tcId);
        if (!tc) return [];
        return [
          { memberType: TEST_CASE_MEMBER, id: m.id, sequence: m.seq, memberId: tc.id, testCaseIssue: issueRef(tc) },
        ];
      });
    return { ...presentSuite(store, suite), testSuiteMembers: members };
  },

  'defects.ofBuild': (ctx) => {
    const name = ctx.params.buildName as string;
    const cycles = cyclesWith(ctx.store, 'build', name);
    if (!cycles.length) throw notFound(`Build "${name}" not found: no test cycle has this build`);
    return defectsOfCycles(ctx.store, cycles).map(issueRef);
  },

  'defects.ofEnvironment': (ctx) => {
    const name = ctx.params.envName as string;
    const cycles = cyclesWith(ctx.store, 'environment', name);
    if (!cycles.length) throw notFound(`Environment "${name}" not found: no test cycle has this environment`);
    return defectsOfCycles(ctx.store, cycles).map(issueRef);
  },
};
