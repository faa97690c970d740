import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { codeRepoId } from '../rules/codehosts.js';
import { issueByKey } from '../rules/domain.js';
import { configureCaptcha } from '../service/auth.js';
import type { CodeRepo, Store } from '../store/store.js';
import {
  applyResolutions,
  applyRunStatuses,
  applyWorkflows,
  DEMO_BUG_WORKFLOW,
  DEMO_ROOT_CAUSE,
  jiraVersionSchema,
  resolutionsSchema,
  runStatusSchema,
  seededStatus,
  workflowSchema,
} from './seed-jira.js';

/**
 * Seed data: the state the emulator starts from (and returns to on reset). The format is documented in the
 * package README; `--seed FILE` loads one, the default is `demoSeed`.
 */

const stepSchema = z.strictObject({
  step: z.string(),
  expectedResult: z.string().default(''),
  stepData: z.string().nullable().default(null),
});

const issueSchema = z.strictObject({
  /** Issue type: `Test Case`, `Test Plan`, `Requirement`, `Bug`, or any other name. */
  type: z.string().min(1),
  summary: z.string().min(1),
  description: z.string().default(''),
  /** Workflow status; default: the first status of the issue's workflow (`Open` in the default one). */
  status: z.string().optional(),
  /** Default: `Done` when the status is in the done category, else none. */
  resolution: z.string().nullable().optional(),
  labels: z.array(z.string()).default([]),
  /** Test case steps. */
  steps: z.array(stepSchema).default([]),
  /** Test plan: keys of its member test cases. */
  members: z.array(z.string()).default([]),
  /** Requirement: keys of child requirements. */
  children: z.array(z.string()).default([]),
  /** Requirement: keys of linked test cases. */
  testCases: z.array(z.string()).default([]),
  automationReference: z.string().optional(),
});

const cycleSchema = z.strictObject({
  plan: z.string(),
  name: z.string().min(1),
  status: z.enum(['Draft', 'Active', 'Completed', 'Aborted']).default('Draft'),
  environment: z.string().nullable().default(null),
  build: z.string().nullable().default(null),
  advanced: z.boolean().default(false),
  /** Load the plan's test cases into the cycle as runs. */
  preloadRuns: z.boolean().default(true),
});

/** A create screen: settable fields besides project, issue type, summary and description, and the required ones. */
const screenSchema = z.strictObject({
  fields: z.array(z.string().min(1)).default(['labels']),
  required: z.array(z.string().min(1)).default([]),
});

const customFieldSchema = z.strictObject({
  id: z.string().regex(/^customfield_\d+$/, 'a custom field id is customfield_ and digits'),
  name: z.string().min(1),
  /** `option` is a single select (`{value}`), `multi-option` a multi-select (`[{value}]`), `user` a picker (`{name}`). */
  type: z.enum(['string', 'number', 'option', 'multi-option', 'user']),
  options: z.array(z.string().min(1)).default([]),
});

const projectSchema = z.strictObject({
  key: z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'a project key is upper-case letters, digits and _'),
  name: z.string().min(1),
  /** Issues in order: the n-th gets key `<KEY>-n`. */
  issues: z.array(issueSchema).default([]),
  runAttributes: z.array(z.strictObject({ name: z.string().min(1), values: z.array(z.string()).min(1) })).default([]),
  cycles: z.array(cycleSchema).default([]),
  /** Jira components and versions (fix and affects versions), by name. */
  components: z.array(z.string().min(1)).default([]),
  versions: z.array(z.string().min(1)).default([]),
  /** Create screens by issue type name; a type without one has labels on its screen and nothing required. */
  createScreens: z.record(z.string().min(1), screenSchema).default({}),
});

const userSchema = z.strictObject({
  name: z.string().min(1),
  displayName: z.string().optional(),
  email: z.string().optional(),
  password: z.string(),
  tokens: z.array(z.string()).default([]),
  licensed: z.boolean().default(true),
  admin: z.boolean().default(false),
  /** Jira asks this user for a CAPTCHA from the start: Basic logins answer 403 CAPTCHA_CHALLENGE (service/auth.ts). */
  captcha: z.boolean().default(false),
});

/**
 * The repositories of the code hosts (Bitbucket Data Center, GitLab, GitHub) and their merge and pull requests: a
 * request to another repository answers the host's 404. Default: the demo's `DEMO/shop` (Bitbucket), `demo/shop`
 * with id 1 and merge request 1 (GitLab), `demo/shop` with pull request 1 (GitHub).
 */
const codeHostsSchema = z
  .strictObject({
    /** Bitbucket repositories, `PROJECT/slug`. */
    bitbucket: z
      .array(z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'a Bitbucket repository is PROJECT/slug'))
      .default(['DEMO/shop']),
    gitlab: z
      .array(
        z.strictObject({
          id: z.number().int().positive(),
          /** `group/name` (subgroups allowed). */
          path: z.string().regex(/^[^/\s]+(\/[^/\s]+)+$/, 'a GitLab project path is group/name'),
          mergeRequests: z.array(z.number().int().positive()).default([1]),
        }),
      )
      .default([{ id: 1, path: 'demo/shop', mergeRequests: [1] }]),
    github: z
      .array(
        z.strictObject({
          repo: z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'a GitHub repository is owner/name'),
          pullRequests: z.array(z.number().int().positive()).default([1]),
        }),
      )
      .default([{ repo: 'demo/shop', pullRequests: [1] }]),
  })
  .prefault({});

export const seedSchema = z.strictObject({
  users: z.array(userSchema).min(1),
  /**
   * After this many failed Basic logins in a row, a user's logins answer 403 with `X-Authentication-Denied-Reason:
   * CAPTCHA_CHALLENGE` (Jira's default is 3); unset: never.
   */
  captchaAfterFailedLogins: z.number().int().positive().optional(),
  projects: z.array(projectSchema).default([]),
  /** Jira priorities, highest first (ids 1, 2, ...); the default one is Medium, or the first. */
  priorities: z.array(z.string().min(1)).min(1).default(['Highest', 'High', 'Medium', 'Low', 'Lowest']),
  customFields: z.array(customFieldSchema).default([]),
  /** Run statuses: a `builtIn` entry renames or disables a built-in; the others are custom ones (seed-jira.ts). */
  runStatuses: z.array(runStatusSchema).default([]),
  /** Jira workflows by project and issue type (seed-jira.ts); others follow the default workflow. */
  workflows: z.array(workflowSchema).default([]),
  /** Resolutions of the instance, in its language (default Jira's six, English). */
  resolutions: resolutionsSchema,
  /** The Jira version answered as: createmeta before 8.4 is the old resource only, from 9.0 the paged ones only. */
  jiraVersion: jiraVersionSchema,
  codeHosts: codeHostsSchema,
});

export type SeedInput = z.input<typeof seedSchema>;
export type Seed = z.output<typeof seedSchema>;

type SeedIssue = z.input<typeof issueSchema>;

/** A seeded test case; each step is `[step, expected result, test data?]`. */
function testCase(summary: string, ...steps: [string, string, string?][]): SeedIssue {
  return {
    type: 'Test Case',
    summary,
    steps: steps.map(([step, expectedResult, stepData]) => ({
      step,
      expectedResult,
      ...(stepData ? { stepData } : {}),
    })),
  };
}

export const demoSeed: SeedInput = {
  users: [
    {
      name: 'admin',
      displayName: 'Admin',
      email: 'admin@example.test',
      password: 'admin',
      tokens: ['casebridge-dev-token'],
      admin: true,
    },
    { name: 'tester', displayName: 'Tess Tester', email: 'tester@example.test', password: 'tester' },
    {
      name: 'nolicense',
      displayName: 'No Licence',
      email: 'nolicense@example.test',
      password: 'nolicense',
      licensed: false,
    },
  ],
  projects: [
    {
      key: 'DEMO',
      name: 'Demo shop',
      runAttributes: [
        { name: 'Browser', values: ['Chrome', 'Firefox'] },
        { name: 'OS', values: ['Linux', 'Windows'] },
        // The Playwright example's two projects (examples/playwright): one Chromium, a desktop and a phone viewport.
        { name: 'Device', values: ['Desktop', 'Mobile'] },
      ],
      issues: [
        {
          type: 'Test Plan',
          summary: 'Release 1.0 regression',
          members: ['DEMO-2', 'DEMO-3', 'DEMO-4', 'DEMO-5', 'DEMO-6', 'DEMO-7'],
        },
        testCase(
          'User logs in with valid credentials',
          ['Open the login page', 'The login form is shown'],
          ['Enter user name and password', 'Fields accept input', 'demo / demo'],
          ['Press "Log in"', 'The dashboard is shown'],
        ),
        testCase(
          'User logs out',
          ['Open the user menu', 'The menu opens'],
          ['Choose "Log out"', 'The login page is shown'],
        ),
        testCase(
          'Search finds products by name',
          ['Type a product name into search', 'Suggestions appear', 'teapot'],
          ['Submit the search', 'Matching products are listed'],
        ),
        testCase(
          'Checkout with a saved card',
          ['Add a product to the cart', 'The cart shows one item'],
          ['Open checkout', 'The saved card is preselected'],
          ['Place the order', 'An order number is shown'],
        ),
        { type: 'Test Case', summary: 'Profile page shows the user name' },
        { type: 'Test Case', summary: 'Product list loads over a slow network' },
        { type: 'Requirement', summary: 'Accounts', children: ['DEMO-9'], testCases: ['DEMO-3'] },
        { type: 'Requirement', summary: 'Users can sign in', testCases: ['DEMO-2'] },
        { type: 'Requirement', summary: 'Customers can buy products', testCases: ['DEMO-4', 'DEMO-5'] },
      ],
      cycles: [],
    },
  ],
  customFields: [DEMO_ROOT_CAUSE],
  workflows: [DEMO_BUG_WORKFLOW],
};

export function loadSeedFile(path: string): Seed {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read seed file ${path}: ${(err as Error).message}`);
  }
  const parsed = seedSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`).join('\n');
    throw new Error(`seed file ${path} is invalid:\n${issues}`);
  }
  return parsed.data;
}

/** The system fields a create screen may list (see ../handlers/jira-fields.ts). */
const SCREEN_FIELDS = [
  'labels',
  'components',
  'priority',
  'fixVersions',
  'versions',
  'assignee',
  'duedate',
  'environment',
];

/** A screen may list system fields and the seed's custom fields; required ones must be on it (or be description). */
function checkScreens(p: z.output<typeof projectSchema>, custom: { id: string }[]): void {
  for (const [type, screen] of Object.entries(p.createScreens)) {
    const at = `projects.${p.key}.createScreens.${type}`;
    for (const f of screen.fields) {
      if (!SCREEN_FIELDS.includes(f) && !custom.some((c) => c.id === f)) {
        throw new Error(
          `seed: ${at}.fields: unknown field '${f}' (expected one of ${SCREEN_FIELDS.join(', ')} or a customFields id)`,
        );
      }
    }
    for (const f of screen.required) {
      if (f !== 'description' && !screen.fields.includes(f)) {
        throw new Error(`seed: ${at}.required: '${f}' is not in its fields`);
      }
    }
  }
}

/**
 * Puts the seed's code-host repositories in the store. Also what fills them into a data folder written before the
 * emulator served the code hosts (the server calls it when the loaded state has none).
 */
export function applyCodeHosts(store: Store, input: SeedInput | Seed): void {
  const { codeHosts } = seedSchema.parse(input);
  const add = (repo: CodeRepo) => {
    if (store.codeRepos.get(repo.id)) throw new Error(`seed: codeHosts.${repo.host} lists ${repo.path} twice`);
    store.codeRepos.insert(repo);
  };
  for (const path of codeHosts.bitbucket)
    add({ id: codeRepoId('bitbucket', path), host: 'bitbucket', path, reviews: [] });
  for (const p of codeHosts.gitlab) {
    if (store.codeRepos.find((r) => r.host === 'gitlab' && r.projectId === p.id)) {
      throw new Error(`seed: codeHosts.gitlab has project id ${p.id} twice`);
    }
    add({ id: codeRepoId('gitlab', p.path), host: 'gitlab', path: p.path, projectId: p.id, reviews: p.mergeRequests });
  }
  for (const g of codeHosts.github) {
    add({ id: codeRepoId('github', g.repo), host: 'github', path: g.repo, reviews: g.pullRequests });
  }
}

/** Fills an empty store from a seed. Throws a message naming the bad reference when the seed is inconsistent. */
export function applySeed(store: Store, input: SeedInput | Seed, now = Date.now()): void {
  const seed = seedSchema.parse(input);
  for (const u of seed.users) {
    store.users.insert({
      name: u.name,
      displayName: u.displayName ?? u.name,
      email: u.email ?? `${u.name}@example.test`,
      password: u.password,
      tokens: u.tokens,
      licensed: u.licensed,
      admin: u.admin,
    });
  }
  configureCaptcha(store, {
    ...(seed.captchaAfterFailedLogins ? { afterFailedLogins: seed.captchaAfterFailedLogins } : {}),
    required: seed.users.filter((u) => u.captcha).map((u) => u.name),
  });
  applyRunStatuses(store, seed.runStatuses);
  applyCodeHosts(store, seed);
  store.settings.insert({ id: 'jiraVersion', value: seed.jiraVersion });
  store.transitions.insert({
    id: 11,
    name: 'Start Progress',
    to: 'In Progress',
    from: ['Open', 'Reopened'],
    resolution: null,
  });
  store.transitions.insert({ id: 21, name: 'Done', to: 'Done', from: [], resolution: 'Done' });
  store.transitions.insert({ id: 31, name: 'Reopen', to: 'Reopened', from: ['Done'], resolution: null });

  seed.priorities.forEach((name, i) => {
    store.priorities.insert({ id: i + 1, name });
  });
  // Jira numbers options, components and versions from 10000, each kind in its own sequence.
  let optionId = 10000;
  for (const f of seed.customFields) {
    if (f.type.endsWith('option') && f.options.length === 0)
      throw new Error(`seed: custom field ${f.id} needs options`);
    store.customFields.insert({ ...f, options: f.options.map((value) => ({ id: String(optionId++), value })) });
  }
  const refs = (names: string[], next: { id: number }) => names.map((name) => ({ id: String(next.id++), name }));
  const componentIds = { id: 10000 };
  const versionIds = { id: 10000 };

  applyResolutions(store, seed.resolutions);
  applyWorkflows(
    store,
    seed.workflows,
    seed.projects.map((p) => p.key),
    (id) => SCREEN_FIELDS.includes(id) || seed.customFields.some((c) => c.id === id),
  );
  const reporter = seed.users[0]?.name ?? 'admin';
  const admin = store.users.all()[0];
  for (const p of seed.projects) {
    checkScreens(p, seed.customFields);
    const project = store.projects.insert({
      key: p.key,
      name: p.name,
      issueCounter: 0,
      ...(p.components.length ? { components: refs(p.components, componentIds) } : {}),
      ...(p.versions.length ? { versions: refs(p.versions, versionIds) } : {}),
      ...(Object.keys(p.createScreens).length ? { createScreens: p.createScreens } : {}),
    });
    for (const a of p.runAttributes)
      store.runAttributes.insert({ projectId: project.id, name: a.name, values: a.values });
    for (const i of p.issues) {
      project.issueCounter += 1;
      store.issues.insert({
        key: `${p.key}-${project.issueCounter}`,
        projectId: project.id,
        type: i.type,
        summary: i.summary,
        description: i.description,
        ...seededStatus(store, project.id, i, `${p.key}-${project.issueCounter}`),
        labels: i.labels,
        reporter,
        created: now,
        updated: now,
        automationReference: i.automationReference ?? null,
      });
    }
    store.projects.update(project);
    const key = (k: string, what: string) => {
      const issue = issueByKey(store, k);
      if (!issue) throw new Error(`seed: ${what} refers to ${k}, which the seed does not define`);
      return issue;
    };
    p.issues.forEach((i, n) => {
      const self = key(`${p.key}-${n + 1}`, 'issue');
      i.steps.forEach((s, idx) => {
        store.caseSteps.insert({
          tcId: self.id,
          seq: idx + 1,
          step: s.step,
          stepData: s.stepData,
          expectedResult: s.expectedResult,
        });
      });
      for (const m of i.members)
        store.planMembers.insert({ tpId: self.id, tcId: key(m, `${self.key}.members`).id, tester: null });
      for (const c of i.children) {
        store.requirementChildren.insert({ parentId: self.id, childId: key(c, `${self.key}.children`).id });
      }
      for (const t of i.testCases)
        store.requirementCases.insert({ reqId: self.id, tcId: key(t, `${self.key}.testCases`).id });
    });
    for (const c of p.cycles) {
      const plan = key(c.plan, `cycle ${c.name}`);
      const started = c.status === 'Draft' ? null : now;
      const cycle = store.cycles.insert({
        tpId: plan.id,
        adhocTcId: null,
        name: c.name,
        environment: c.environment,
        build: c.build,
        plannedStartDate: null,
        plannedEndDate: null,
        status: c.status,
        advanced: c.advanced,
        notifyTester: false,
        createdAt: now,
        startedAt: started,
        completedAt: c.status === 'Completed' || c.status === 'Aborted' ? now : null,
      });
      if (c.preloadRuns && !c.advanced && admin) {
        const members = store.planMembers.filter((m) => m.tpId === plan.id);
        members.forEach((m, idx) => {
          const run = store.runs.insert({
            cycleId: cycle.id,
            tcId: m.tcId,
            status: 'Not Tested',
            comment: null,
            executedBy: null,
            executedAt: null,
            tester: null,
            order: idx + 1,
            attributes: null,
            urgency: null,
            createdAt: now,
            createdBy: admin.name,
          });
          for (const s of store.caseSteps.filter((x) => x.tcId === m.tcId)) {
            store.runSteps.insert({
              runId: run.id,
              caseStepId: s.id,
              seq: s.seq,
              status: 'Not Tested',
              step: s.step,
              expectedResult: s.expectedResult,
              stepData: s.stepData,
              actualResult: null,
            });
          }
          store.history.insert({
            runId: run.id,
            userId: admin.id,
            activity: 'New Created',
            activityType: 'Test Run',
            at: now,
          });
        });
      }
    }
  }
}
