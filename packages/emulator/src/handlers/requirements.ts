import {
  bugRefsOfRuns,
  byId,
  ISSUE_TYPES,
  issueRef,
  issuesByIds,
  linkedIssues,
  requireOfType,
} from '../rules/domain.js';
import { type Ctx, type Handler, invalid, notFound } from '../service/context.js';
import type { Issue, Project, RequirementSuite, Store } from '../store/store.js';

/**
 * Requirement and requirement-suite operations.
 *
 * Rules the spec leaves open, chosen here as synapseRT behaves (the package README lists them):
 * - A requirement has at most one parent: adding it as a child elsewhere moves it. Cycles and self-parenting are
 *   refused (500) before anything is written.
 * - A requirement may be filed in several suites; suite names are unique among siblings.
 * - The project suite list is the root level of the project's tree: root suites, and requirements in no suite.
 */

function requirement(ctx: Ctx): Issue {
  return requireOfType(ctx.store, ctx.params.requirementIssueKey, ISSUE_TYPES.requirement);
}

/** Keys once each, in the order given (a repeated key in a request is not an error). */
function distinct(keys: readonly string[]): string[] {
  return [...new Set(keys)];
}

/** The parent of a requirement, if any. */
function parentOf(store: Store, reqId: number): Issue | undefined {
  const edge = store.requirementChildren.find((e) => e.childId === reqId);
  return edge ? store.issues.get(edge.parentId) : undefined;
}

/** The chain from the root ancestor down to the requirement itself. */
function lineage(store: Store, req: Issue): Issue[] {
  const chain = [req];
  // The visited set only guards against a seed file that was edited into a loop; the API never makes one.
  const seen = new Set([req.id]);
  for (let p = parentOf(store, req.id); p && !seen.has(p.id); p = parentOf(store, p.id)) {
    seen.add(p.id);
    chain.unshift(p);
  }
  return chain;
}

function immediateChildren(store: Store, reqId: number): Issue[] {
  const childIds = store.requirementChildren.filter((e) => e.parentId === reqId).map((e) => e.childId);
  return issuesByIds(store, childIds);
}

/** All descendants, depth first: each child is followed by its own descendants. */
function descendants(store: Store, reqId: number): Issue[] {
  const out: Issue[] = [];
  const seen = new Set([reqId]);
  const visit = (id: number) => {
    for (const child of immediateChildren(store, id)) {
      if (seen.has(child.id)) continue;
      seen.add(child.id);
      out.push(child);
      visit(child.id);
    }
  };
  visit(reqId);
  return out;
}

function projectByKey(store: Store, key: string): Project {
  const project = store.projects.find((p) => p.key === key);
  if (!project) throw notFound(`Project ${key} not found`);
  return project;
}

/** A project by key, or by id when the value is all digits. */
function projectByKeyOrId(store: Store, keyOrId: string, field: string): Project {
  const project = /^\d+$/.test(keyOrId)
    ? store.projects.get(Number(keyOrId))
    : store.projects.find((p) => p.key === keyOrId);
  if (!project) throw notFound(`Project ${keyOrId} (${field}) not found`);
  return project;
}

function requireSuite(store: Store, id: number, field: string): RequirementSuite {
  const suite = store.requirementSuites.get(id);
  if (!suite) throw notFound(`Requirement suite ${id} (${field}) not found`);
  return suite;
}

function subSuites(store: Store, suiteId: number): RequirementSuite[] {
  return store.requirementSuites.filter((s) => s.parentId === suiteId).sort(byId);
}

/**
 * The `/`-joined names from the root suite down. A `/` inside one name is written `\/`, as test-suite paths
 * write it, so the path stays readable level by level.
 */
function suitePath(store: Store, suite: RequirementSuite): string {
  const names: string[] = [];
  const seen = new Set<number>();
  for (let s: RequirementSuite | undefined = suite; s && !seen.has(s.id); s = store.requirementSuites.get(s.parentId)) {
    seen.add(s.id);
    names.unshift(s.name.replaceAll('/', '\\/'));
  }
  return names.join('/');
}

function presentSuiteItem(s: RequirementSuite): { name: string; id: number; projectId: number } {
  return { name: s.name, id: s.id, projectId: s.projectId };
}

export const requirementsHandlers: Record<string, Handler> = {
  'requirements.addChildren': (ctx) => {
    const { store } = ctx;
    const parent = requirement(ctx);
    // Every key is checked before anything is written, so a refused request changes nothing.
    const children = distinct(ctx.body.requirementKeys).map((k) => requireOfType(store, k, ISSUE_TYPES.requirement));
    const ancestors = lineage(store, parent);
    for (const child of children) {
      if (child.id === parent.id) {
        throw invalid(`A requirement cannot be its own child: ${parent.key} is in requirementKeys`, 'requirementKeys');
      }
      if (ancestors.some((a) => a.id === child.id)) {
        throw invalid(
          `Adding ${child.key} as a child of ${parent.key} would make a cycle: ${child.key} is an ancestor of ` +
            `${parent.key} (${ancestors.map((a) => a.key).join('->')})`,
          'requirementKeys',
        );
      }
    }
    for (const child of children) {
      const edges = store.requirementChildren.filter((e) => e.childId === child.id);
      if (edges.length === 1 && edges[0]?.parentId === parent.id) continue;
      // One parent per requirement: re-parenting moves the child (with its own subtree).
      for (const e of edges) store.requirementChildren.remove(e.id);
      store.requirementChildren.insert({ parentId: parent.id, childId: child.id });
    }
  },

  'requirements.getChildren': (ctx) => descendants(ctx.store, requirement(ctx).id).map(issueRef),

  'requirements.getOnlyImmediateChildren': (ctx) => immediateChildren(ctx.store, requirement(ctx).id).map(issueRef),

  'requirements.linkTestCase': (ctx) => {
    const { store } = ctx;
    const req = requirement(ctx);
    const cases = distinct(ctx.body.testCaseKeys).map((k) => requireOfType(store, k, ISSUE_TYPES.testCase));
    for (const tc of cases) {
      if (!store.requirementCases.find((l) => l.reqId === req.id && l.tcId === tc.id)) {
        store.requirementCases.insert({ reqId: req.id, tcId: tc.id });
      }
    }
  },

  'requirements.linkedTestCases': (ctx) => {
    const req = requirement(ctx);
    return linkedIssues(ctx.store, (l) => (l.reqId === req.id ? l.tcId : undefined)).map(issueRef);
  },

  'requirements.deleteLinkedTestCases': (ctx) => {
    const { store } = ctx;
    const req = requirement(ctx);
    const cases = distinct(ctx.body.testCaseKeys).map((k) => requireOfType(store, k, ISSUE_TYPES.testCase));
    const ids = new Set(cases.map((c) => c.id));
    store.requirementCases.removeWhere((x) => x.reqId === req.id && ids.has(x.tcId));
  },

  'defects.ofRequirement': (ctx) => {
    const { store } = ctx;
    const req = requirement(ctx);
    const cases = new Set(store.requirementCases.filter((l) => l.reqId === req.id).map((l) => l.tcId));
    const runs = store.runs.filter((r) => cases.has(r.tcId));
    return bugRefsOfRuns(store, runs);
  },

  'requirements.linkedRequirementSuites': (ctx) => {
    const { store } = ctx;
    const req = requirement(ctx);
    const suites = store.requirementSuiteMembers
      .filter((m) => m.reqId === req.id)
      .map((m) => store.requirementSuites.get(m.suiteId))
      .filter((s): s is RequirementSuite => s !== undefined)
      .sort(byId);
    return {
      requirementSuites: suites.map((s) => suitePath(store, s)).join(', '),
      summary: req.summary,
      projectKey: store.projects.get(req.projectId)?.key ?? '',
      requirementHierarchy: lineage(store, req)
        .map((r) => r.key)
        .join('->'),
    };
  },

  'requirementSuites.create': (ctx) => {
    const { store } = ctx;
    const b = ctx.body as { projectKey: string; suiteName: string; parentSuiteId?: number };
    const project = projectByKey(store, b.projectKey);
    // A missing parentSuiteId means a root suite, as `0` does.
    const parentId = b.parentSuiteId ?? 0;
    if (parentId !== 0) {
      const parent = store.requirementSuites.get(parentId);
      if (!parent || parent.projectId !== project.id) {
        throw notFound(`Requirement suite ${parentId} (parentSuiteId) not found in project ${project.key}`);
      }
    }
    const clash = store.requirementSuites.find(
      (s) => s.projectId === project.id && s.parentId === parentId && s.name === b.suiteName,
    );
    if (clash) {
      const where = parentId === 0 ? `at the root of project ${project.key}` : `in suite ${parentId}`;
      throw invalid(`A requirement suite named "${b.suiteName}" already exists ${where} (id ${clash.id})`, 'suiteName');
    }
    const suite = store.requirementSuites.insert({ projectId: project.id, name: b.suiteName, parentId });
    return { projectId: project.id, suiteName: suite.name, parentSuiteId: parentId, id: suite.id };
  },

  'requirementSuites.delete': (ctx) => {
    const { store } = ctx;
    const project = projectByKeyOrId(store, ctx.query.projectKeyOrId, 'projectKeyOrId');
    const suite = store.requirementSuites.get(ctx.query.requirementSuiteId);
    if (!suite || suite.projectId !== project.id) {
      throw notFound(`Requirement suite ${ctx.query.requirementSuiteId} not found in project ${project.key}`);
    }
    const doomed = [suite];
    for (let i = 0; i < doomed.length; i += 1) doomed.push(...subSuites(store, (doomed[i] as RequirementSuite).id));
    const ids = new Set(doomed.map((s) => s.id));
    for (const m of store.requirementSuiteMembers.filter((x) => ids.has(x.suiteId))) {
      store.requirementSuiteMembers.remove(m.id);
    }
    for (const s of doomed) store.requirementSuites.remove(s.id);
  },

  'requirementSuites.addMember': (ctx) => {
    const { store } = ctx;
    const q = ctx.query as { requirementSuiteId: number; memberId: number; memberProjectKeyOrId: string };
    const suite = requireSuite(store, q.requirementSuiteId, 'requirementSuiteId');
    const project = projectByKeyOrId(store, q.memberProjectKeyOrId, 'memberProjectKeyOrId');
    const req = store.issues.get(q.memberId);
    if (!req || req.type !== ISSUE_TYPES.requirement || req.projectId !== project.id) {
      throw notFound(`Requirement with issue id ${q.memberId} (memberId) not found in project ${project.key}`);
    }
    if (!store.requirementSuiteMembers.find((m) => m.suiteId === suite.id && m.reqId === req.id)) {
      store.requirementSuiteMembers.insert({ suiteId: suite.id, reqId: req.id });
    }
  },

  'requirementSuites.deleteMember': (ctx) => {
    const { store } = ctx;
    const q = ctx.query as { requirementSuiteId: number; memberId: number };
    const suite = requireSuite(store, q.requirementSuiteId, 'requirementSuiteId');
    const member = store.requirementSuiteMembers.find((m) => m.suiteId === suite.id && m.reqId === q.memberId);
    if (!member)
      throw notFound(`Requirement with issue id ${q.memberId} (memberId) is not a member of suite ${suite.id}`);
    store.requirementSuiteMembers.remove(member.id);
  },

  'requirementSuites.list': (ctx) => {
    const { store } = ctx;
    const project = projectByKey(store, ctx.params.projectKey);
    const filed = new Set(store.requirementSuiteMembers.all().map((m) => m.reqId));
    return {
      requirementSuites: store.requirementSuites
        .filter((s) => s.projectId === project.id && s.parentId === 0)
        .sort(byId)
        .map(presentSuiteItem),
      requirements: store.issues
        .filter((i) => i.projectId === project.id && i.type === ISSUE_TYPES.requirement && !filed.has(i.id))
        .sort(byId)
        .map(issueRef),
    };
  },

  'requirementSuites.get': (ctx) => {
    const { store } = ctx;
    const suite = requireSuite(store, ctx.params.suiteId, 'suiteId');
    const reqIds = store.requirementSuiteMembers.filter((m) => m.suiteId === suite.id).map((m) => m.reqId);
    return {
      id: suite.id,
      name: suite.name,
      projectId: suite.projectId,
      requirementSuites: subSuites(store, suite.id).map(presentSuiteItem),
      requirements: issuesByIds(store, reqIds).map(issueRef),
    };
  },
};
