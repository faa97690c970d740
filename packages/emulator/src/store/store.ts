/**
 * The emulator's data model: one table per kind of thing the services keep.
 *
 * Tables live in memory and are the source of truth for reads. Every write goes through `insert`, `update` or
 * `remove`, which records the change; the server commits the recorded changes (to the data file when `--data` is set)
 * before it answers, so an acknowledged write survives a kill -9.
 */

import type { CreateScreen, CustomField, NamedRef, Setting, Transition, Workflow } from './jira-rows.js';

export type {
  CreateScreen,
  CustomField,
  NamedRef,
  Setting,
  Transition,
  Workflow,
  WorkflowStatus,
} from './jira-rows.js';

export type RunStatusName = string;

export interface User {
  id: number;
  /** Login name (Jira "name"). */
  name: string;
  displayName: string;
  email: string;
  password: string;
  /** Personal access tokens (Bearer). */
  tokens: string[];
  /** False: the user gets 403 on every test-management operation (no valid licence). */
  licensed: boolean;
  admin: boolean;
}

export interface Project {
  id: number;
  key: string;
  name: string;
  /** Last issue number used: keys are `KEY-n`. */
  issueCounter: number;
  /** Jira components and versions of the project (absent: none). */
  components?: NamedRef[];
  versions?: NamedRef[];
  /** Create screens by issue type name; a type without one has Jira's minimal screen (labels, nothing required). */
  createScreens?: Record<string, CreateScreen>;
}

/** A Jira issue: test case, test plan, requirement, bug, or any other type. */
export interface Issue {
  id: number;
  key: string;
  projectId: number;
  type: string;
  summary: string;
  description: string;
  /** Workflow status name: `Open`, `In Progress`, `Done`, `Reopened`. */
  status: string;
  resolution: string | null;
  labels: string[];
  reporter: string;
  created: number;
  updated: number;
  /** `automationReference` of a test case, when set. */
  automationReference?: string | null;
  /** Other create-screen fields by field id, normalised (`components: [{id, name}]`, `priority: {id, name}`). */
  fields?: Record<string, unknown>;
}

/** A step of a test case. */
export interface CaseStep {
  id: number;
  tcId: number;
  /** 1-based position. */
  seq: number;
  step: string;
  stepData: string | null;
  expectedResult: string;
}

export interface PlanMember {
  id: number;
  tpId: number;
  tcId: number;
  tester: string | null;
}

export type CycleStatus = 'Draft' | 'Active' | 'Completed' | 'Aborted';

export interface Cycle {
  id: number;
  /** Owning test plan; null for the hidden ad hoc cycle of a test case. */
  tpId: number | null;
  /** For an ad hoc cycle: the test case it belongs to. */
  adhocTcId: number | null;
  name: string;
  environment: string | null;
  build: string | null;
  plannedStartDate: string | null;
  plannedEndDate: string | null;
  status: CycleStatus;
  advanced: boolean;
  notifyTester: boolean;
  createdAt: number;
  startedAt: number | null;
  completedAt: number | null;
}

export interface Run {
  id: number;
  cycleId: number;
  tcId: number;
  status: RunStatusName;
  comment: string | null;
  executedBy: string | null;
  executedAt: number | null;
  tester: string | null;
  /** Position in the cycle's run list (reorderTestRun changes it). */
  order: number;
  /** Run attributes of an advanced cycle's run (e.g. {Browser: 'Chrome'}). */
  attributes: Record<string, string> | null;
  urgency: string | null;
  createdAt: number;
  createdBy: string;
}

export interface RunStep {
  id: number;
  runId: number;
  caseStepId: number | null;
  seq: number;
  status: RunStatusName;
  step: string;
  expectedResult: string;
  stepData: string | null;
  actualResult: string | null;
}

/** A bug (issue) linked to a run, or to one step of it. */
export interface BugLink {
  id: number;
  runId: number;
  runStepId: number | null;
  issueId: number;
}

export interface HistoryEntry {
  id: number;
  runId: number;
  userId: number;
  /** A status name, `+ KEY-1` for a linked issue, `Attached`, or `New Created`. */
  activity: string;
  /** `Status`, `Issue` or `Test Run`. */
  activityType: string;
  at: number;
}

export interface Attachment {
  id: number;
  runId: number;
  runStepId: number | null;
  fileName: string;
  mimeType: string;
  size: number;
  sha256: string;
  /** Blob id in the blob store. */
  blob: string;
  createdAt: number;
  createdBy: string;
}

/** Requirement hierarchy edge. */
export interface RequirementChild {
  id: number;
  parentId: number;
  childId: number;
}

/** Requirement ↔ test case link. */
export interface RequirementCase {
  id: number;
  reqId: number;
  tcId: number;
}

export interface RequirementSuite {
  id: number;
  projectId: number;
  name: string;
  /** 0 for a root suite. */
  parentId: number;
}

export interface RequirementSuiteMember {
  id: number;
  suiteId: number;
  reqId: number;
}

export interface TestSuite {
  id: number;
  projectId: number;
  /** One level's name (may contain a literal `/`). */
  name: string;
  /** null for a root suite. */
  parentId: number | null;
}

export interface TestSuiteMember {
  id: number;
  suiteId: number;
  tcId: number;
  seq: number;
}

export interface AutomationJob {
  /** automationBuildId */
  id: number;
  cycleId: number;
  appName: string;
  jobKey: string;
  testType: string;
  /** Stored as given (spaces and newlines stripped); SRTCYCLE is added on retrieval. */
  params: string;
  triggers: number[];
}

/** A run attribute of a project (advanced cycles), e.g. Browser: Chrome, Firefox. */
export interface RunAttribute {
  id: number;
  projectId: number;
  name: string;
  values: string[];
}

/** A run status: the five built-ins plus any an administrator adds. */
export interface RunStatusDef {
  id: number;
  name: string;
  description: string;
  color: string;
  lozenge: string;
  enabled: boolean;
  immutable: boolean;
  isDefault: boolean;
  /** The built-in status this one is (Passed, Failed, Blocked, Not Tested, NA), whatever it is named now; absent: custom. */
  builtIn?: string | null;
  /** synapseRT's category of the status; absent (rows written before categories): Executed, Not Tested excepted. */
  category?: 'Executed' | 'Not Executed';
}

/** Login session (JSESSIONID) of either service. */
export interface Session {
  id: string;
  userId: number;
  createdAt: number;
  /** The simulated Jira node (0-based) that issued it: valid there only. Absent: valid on every node. */
  node?: number;
}

/** Content-repository ticket (EDU-TICKET). */
export interface Ticket {
  id: string;
  userId: number;
  createdAt: number;
}

/** Content-repository node (file or folder). */
export interface RepoNode {
  id: string;
  parentId: string | null;
  name: string;
  type: string;
  isDirectory: boolean;
  ownerId: number;
  /** Metadata properties, `prefix:name` → values. */
  properties: Record<string, string[]>;
  aspects: string[];
  mimetype: string | null;
  size: number | null;
  blob: string | null;
  sha256: string | null;
  createdAt: number;
  modifiedAt: number;
  contentVersion: string | null;
}

/** A code host the emulator stands in for, besides Jira. */
export type CodeHost = 'bitbucket' | 'gitlab' | 'github';

/**
 * A repository a code host holds: a Bitbucket repository (`path` `PROJECT/slug`), a GitLab project (`path`
 * `group/name`, with its numeric `projectId`) or a GitHub repository (`owner/name`). Its id is `<host>:<path>` in
 * lower case: the three hosts find a repository whatever the case of its name.
 */
export interface CodeRepo {
  id: string;
  host: CodeHost;
  /** As seeded, in its own case. */
  path: string;
  /** GitLab's numeric project id. */
  projectId?: number;
  /** The merge requests (GitLab iids) or pull requests (GitHub numbers) it has. */
  reviews: number[];
}

/** A Bitbucket Code Insights report of a commit; id `<repo id>|<commit>|<key>`, the commit in lower case. */
export interface InsightReport {
  id: string;
  repoId: string;
  commit: string;
  key: string;
  title: string;
  details?: string;
  result?: 'PASS' | 'FAIL';
  reporter?: string;
  link?: string;
  logoUrl?: string;
  data: { title: string; type: string; value: unknown }[];
  createdDate: number;
}

/** An annotation of a report (Bitbucket does not deduplicate them). */
export interface InsightAnnotation {
  id: number;
  reportId: string;
  message: string;
  severity: 'LOW' | 'MEDIUM' | 'HIGH';
  path?: string;
  line?: number;
  type?: 'VULNERABILITY' | 'CODE_SMELL' | 'BUG';
  link?: string;
  externalId?: string;
}

/** A commit's build status under one key (Bitbucket's build status is per commit, whatever the repository). */
export interface BuildStatus {
  id: number;
  commit: string;
  key: string;
  state: 'SUCCESSFUL' | 'FAILED' | 'INPROGRESS';
  name?: string;
  url: string;
  description?: string;
  dateAdded: number;
}

/** A GitLab merge-request note or a GitHub pull-request comment. */
export interface ReviewComment {
  id: number;
  repoId: string;
  /** The merge request's iid or the pull request's number. */
  review: number;
  body: string;
  author: string;
  createdAt: number;
  updatedAt: number;
}

/** A recorded change, as the persistence layer receives it. */
export type Change =
  | { op: 'put'; table: string; id: number | string; row: unknown }
  | { op: 'delete'; table: string; id: number | string }
  | { op: 'seq'; table: string; next: number };

export interface ChangeSink {
  record(change: Change): void;
}

/** One table: rows by id, an id sequence for numeric ids, and change recording. */
export class Table<T extends { id: K }, K extends number | string = number> {
  readonly rows = new Map<K, T>();
  private next = 1;

  constructor(
    readonly name: string,
    private readonly sink: ChangeSink,
  ) {}

  /** Inserts a row; numeric tables assign the next id when none is given. */
  insert(row: Omit<T, 'id'> & { id?: K }): T {
    let id = row.id;
    if (id === undefined) {
      id = this.next as K;
      this.next += 1;
      this.sink.record({ op: 'seq', table: this.name, next: this.next });
    } else if (typeof id === 'number' && id >= this.next) {
      this.next = id + 1;
      this.sink.record({ op: 'seq', table: this.name, next: this.next });
    }
    const full = { ...row, id } as T;
    this.rows.set(id, full);
    this.sink.record({ op: 'put', table: this.name, id, row: full });
    return full;
  }

  /** Records a row changed in place (or replaces it). */
  update(row: T): T {
    this.rows.set(row.id, row);
    this.sink.record({ op: 'put', table: this.name, id: row.id, row });
    return row;
  }

  remove(id: K): boolean {
    const had = this.rows.delete(id);
    if (had) this.sink.record({ op: 'delete', table: this.name, id });
    return had;
  }

  /** Removes every row that matches; returns how many. */
  removeWhere(pred: (row: T) => boolean): number {
    const rows = this.filter(pred);
    for (const row of rows) this.remove(row.id);
    return rows.length;
  }

  get(id: K): T | undefined {
    return this.rows.get(id);
  }

  find(pred: (row: T) => boolean): T | undefined {
    for (const row of this.rows.values()) if (pred(row)) return row;
    return undefined;
  }

  filter(pred: (row: T) => boolean): T[] {
    const out: T[] = [];
    for (const row of this.rows.values()) if (pred(row)) out.push(row);
    return out;
  }

  all(): T[] {
    return [...this.rows.values()];
  }

  get size(): number {
    return this.rows.size;
  }

  /** The id the next insert without one gets (numeric tables); persisted as the table's sequence. */
  get nextId(): number {
    return this.next;
  }

  /** Loads persisted rows without recording them as changes. */
  load(rows: Iterable<T>, next: number | undefined): void {
    for (const row of rows) this.rows.set(row.id, row);
    if (next !== undefined) this.next = next;
  }

  clear(): void {
    for (const id of [...this.rows.keys()]) this.remove(id);
    this.next = 1;
    this.sink.record({ op: 'seq', table: this.name, next: 1 });
  }
}

/** All tables. Handlers read and write through these. */
export class Store implements ChangeSink {
  private pending: Change[] = [];

  readonly users = new Table<User>('users', this);
  readonly projects = new Table<Project>('projects', this);
  readonly issues = new Table<Issue>('issues', this);
  readonly caseSteps = new Table<CaseStep>('caseSteps', this);
  readonly planMembers = new Table<PlanMember>('planMembers', this);
  readonly cycles = new Table<Cycle>('cycles', this);
  readonly runs = new Table<Run>('runs', this);
  readonly runSteps = new Table<RunStep>('runSteps', this);
  readonly bugLinks = new Table<BugLink>('bugLinks', this);
  readonly history = new Table<HistoryEntry>('history', this);
  readonly attachments = new Table<Attachment>('attachments', this);
  readonly requirementChildren = new Table<RequirementChild>('requirementChildren', this);
  readonly requirementCases = new Table<RequirementCase>('requirementCases', this);
  readonly requirementSuites = new Table<RequirementSuite>('requirementSuites', this);
  readonly requirementSuiteMembers = new Table<RequirementSuiteMember>('requirementSuiteMembers', this);
  readonly testSuites = new Table<TestSuite>('testSuites', this);
  readonly testSuiteMembers = new Table<TestSuiteMember>('testSuiteMembers', this);
  readonly automationJobs = new Table<AutomationJob>('automationJobs', this);
  readonly runAttributes = new Table<RunAttribute>('runAttributes', this);
  readonly runStatuses = new Table<RunStatusDef>('runStatuses', this);
  readonly transitions = new Table<Transition>('transitions', this);
  readonly workflows = new Table<Workflow>('workflows', this);
  readonly settings = new Table<Setting, string>('settings', this);
  readonly priorities = new Table<{ id: number; name: string }>('priorities', this);
  readonly customFields = new Table<CustomField, string>('customFields', this);
  readonly sessions = new Table<Session, string>('sessions', this);
  readonly tickets = new Table<Ticket, string>('tickets', this);
  readonly nodes = new Table<RepoNode, string>('nodes', this);
  readonly codeRepos = new Table<CodeRepo, string>('codeRepos', this);
  readonly insightReports = new Table<InsightReport, string>('insightReports', this);
  readonly insightAnnotations = new Table<InsightAnnotation>('insightAnnotations', this);
  readonly buildStatuses = new Table<BuildStatus>('buildStatuses', this);
  readonly reviewComments = new Table<ReviewComment>('reviewComments', this);

  /** Tables by name, for persistence and the state dump. */
  tables(): Table<{ id: number | string }, number | string>[] {
    return Object.values(this).filter((v): v is Table<{ id: number | string }, number | string> => v instanceof Table);
  }

  record(change: Change): void {
    this.pending.push(change);
  }

  /** Takes the changes recorded since the last call. */
  takeChanges(): Change[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }
}
