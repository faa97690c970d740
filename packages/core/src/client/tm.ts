import {
  casesAddSteps,
  casesAutomationReference,
  casesCreateTestCase,
  casesCreateTestCaseInSuite,
  casesDeleteLinkedRequirements,
  casesDeleteStep,
  casesDeleteStepBySequenceNo,
  casesGetDefects,
  casesLinkedRequirements,
  casesLinkedTestPlans,
  casesLinkedTestSuites,
  casesLinkTestCaseToSuite,
  casesSteps,
  casesUpdateStepById,
  casesUpdateStepBySequence,
} from '../contract/tm/cases.js';
import {
  automationAddJob,
  automationJobs,
  automationTriggerJob,
  cyclesAddMembersToTestCycle,
  cyclesBulkAssignUpdate,
  cyclesCreateTestRuns,
  cyclesDefects,
  cyclesEditCycle,
  cyclesReorderTestRun,
  cyclesTestRuns,
  cyclesTestRunsByCycleId,
  cyclesWorkflow,
} from '../contract/tm/cycles.js';
import {
  plansAddCycle,
  plansAddMembers,
  plansAssignTester,
  plansCycles,
  plansDefects,
  plansDeleteCycle,
  plansInformation,
  plansMembers,
  plansTestRunsCreated,
} from '../contract/tm/plans.js';
import {
  requirementSuitesAddMember,
  requirementSuitesCreate,
  requirementSuitesDelete,
  requirementSuitesDeleteMember,
  requirementSuitesGet,
  requirementSuitesList,
  requirementsAddChildren,
  requirementsDeleteLinkedTestCases,
  requirementsGetChildren,
  requirementsGetDefects,
  requirementsGetImmediateChildren,
  requirementsLinkedSuites,
  requirementsLinkedTestCases,
  requirementsLinkTestCase,
} from '../contract/tm/requirements.js';
import {
  attachmentsAddToRun,
  attachmentsAddToRunStep,
  attachmentsDelete,
  attachmentsDetails,
  defectsCreateRunBug,
  defectsCreateRunStepBug,
  defectsOfRun,
  runsAdhocCreate,
  runsAdhocTestRuns,
  runsBulkStatusUpdate,
  runsCaseTestRuns,
  runsForDefect,
  runsGet,
  runsLinkBugToTestRun,
  runsUpdate,
  runsUpdateStep,
  runsUpdateTestRun,
} from '../contract/tm/runs.js';
import {
  defectsBuildDefects,
  defectsEnvironmentDefects,
  suitesCreateTestSuite,
  suitesTestSuite,
  suitesTestSuites,
} from '../contract/tm/suites.js';
import { bindGroup, bindUploads, type ClientOptions, type Methods, ServiceClient, type UploadMethods } from './base.js';
import { ConfigError } from './errors.js';
import { JIRA, jiraSessionLogin } from './jira.js';

/** The default API prefix of the test-management service (synapseRT's REST segment). */
export const TM_PREFIX = '/rest/synapse/latest/public';

/**
 * The 72 test-management operations grouped the way a user thinks. Every operation appears exactly once (a test
 * checks this against the contract).
 */
export const TM_GROUPS = {
  plans: {
    addMembers: plansAddMembers,
    assignTesterToTestCase: plansAssignTester,
    addCycle: plansAddCycle,
    cycles: plansCycles,
    deleteCycleByIdOrName: plansDeleteCycle,
    members: plansMembers,
    testPlanInformation: plansInformation,
    getTestRunsCreated: plansTestRunsCreated,
  },
  cycles: {
    createTestRuns: cyclesCreateTestRuns,
    bulkAssignUpdate: cyclesBulkAssignUpdate,
    workflow: cyclesWorkflow,
    editCycle: cyclesEditCycle,
    testRuns: cyclesTestRuns,
    testRunsByCycleId: cyclesTestRunsByCycleId,
    addMembersToTestCycle: cyclesAddMembersToTestCycle,
    reorderTestRun: cyclesReorderTestRun,
  },
  runs: {
    get: runsGet,
    caseTestRuns: runsCaseTestRuns,
    updateTestRun: runsUpdateTestRun,
    updateStep: runsUpdateStep,
    update: runsUpdate,
    bulkStatusUpdate: runsBulkStatusUpdate,
    linkBugToTestRun: runsLinkBugToTestRun,
    adhocCreate: runsAdhocCreate,
    adhocTestRuns: runsAdhocTestRuns,
    getTestRunsForDefect: runsForDefect,
  },
  cases: {
    createTestCase: casesCreateTestCase,
    createTestCaseInSuite: casesCreateTestCaseInSuite,
    linkTestCaseToSuite: casesLinkTestCaseToSuite,
    addSteps: casesAddSteps,
    steps: casesSteps,
    updateStepById: casesUpdateStepById,
    updateStepBySequence: casesUpdateStepBySequence,
    deleteStep: casesDeleteStep,
    deleteStepBySequenceNo: casesDeleteStepBySequenceNo,
    linkedTestSuites: casesLinkedTestSuites,
    linkedTestPlans: casesLinkedTestPlans,
    linkedRequirements: casesLinkedRequirements,
    deleteLinkedRequirements: casesDeleteLinkedRequirements,
    automationReference: casesAutomationReference,
  },
  requirements: {
    addChildren: requirementsAddChildren,
    getChildren: requirementsGetChildren,
    getOnlyImmediateChildren: requirementsGetImmediateChildren,
    linkTestCase: requirementsLinkTestCase,
    linkedTestCases: requirementsLinkedTestCases,
    deleteLinkedTestCases: requirementsDeleteLinkedTestCases,
    getDefects: requirementsGetDefects,
    linkedRequirementSuites: requirementsLinkedSuites,
  },
  requirementSuites: {
    create: requirementSuitesCreate,
    delete: requirementSuitesDelete,
    addMember: requirementSuitesAddMember,
    deleteMember: requirementSuitesDeleteMember,
    list: requirementSuitesList,
    get: requirementSuitesGet,
  },
  testSuites: {
    create: suitesCreateTestSuite,
    list: suitesTestSuites,
    get: suitesTestSuite,
  },
  defects: {
    ofPlan: plansDefects,
    ofCycle: cyclesDefects,
    ofCase: casesGetDefects,
    ofBuild: defectsBuildDefects,
    ofEnvironment: defectsEnvironmentDefects,
    ofRun: defectsOfRun,
    createRunBug: defectsCreateRunBug,
    createRunStepBug: defectsCreateRunStepBug,
  },
  automation: {
    addJobToTestCycle: automationAddJob,
    jobs: automationJobs,
    triggerJob: automationTriggerJob,
  },
  attachments: {
    getAttachmentDetails: attachmentsDetails,
    deleteAttachment: attachmentsDelete,
  },
} as const;

/** Operations that upload files (multipart). */
export const TM_UPLOADS = {
  attachments: {
    addToRun: attachmentsAddToRun,
    addToRunStep: attachmentsAddToRunStep,
  },
} as const;

type G = typeof TM_GROUPS;
type U = typeof TM_UPLOADS;

/**
 * Client of the test-management service: `new TestManagementClient({ baseUrl, auth })`, where `baseUrl` is the Jira
 * base URL and the API prefix defaults to `/rest/synapse/latest/public` (`prefix` changes it, e.g. to the
 * `/rest/svc/latest/public` alias). The Jira platform subset of the same server is under `jira`.
 */
export class TestManagementClient extends ServiceClient {
  readonly plans: Methods<G['plans']>;
  readonly cycles: Methods<G['cycles']>;
  readonly runs: Methods<G['runs']>;
  readonly cases: Methods<G['cases']>;
  readonly requirements: Methods<G['requirements']>;
  readonly requirementSuites: Methods<G['requirementSuites']>;
  readonly testSuites: Methods<G['testSuites']>;
  readonly defects: Methods<G['defects']>;
  readonly automation: Methods<G['automation']>;
  readonly attachments: Methods<G['attachments']> & UploadMethods<U['attachments']>;
  /** Jira platform calls on the same server and credentials (preflight, defect search). */
  readonly jira: Methods<typeof JIRA>;

  constructor(options: ClientOptions) {
    super(options, 'tm', TM_PREFIX, (self) => jiraSessionLogin(self, (self as TestManagementClient).authenticator));
    if (options.auth.type === 'ticket') {
      throw new ConfigError(
        'ticket auth is for the content repository; use basic, bearer or session for test management',
      );
    }
    this.plans = bindGroup(this, TM_GROUPS.plans);
    this.cycles = bindGroup(this, TM_GROUPS.cycles);
    this.runs = bindGroup(this, TM_GROUPS.runs);
    this.cases = bindGroup(this, TM_GROUPS.cases);
    this.requirements = bindGroup(this, TM_GROUPS.requirements);
    this.requirementSuites = bindGroup(this, TM_GROUPS.requirementSuites);
    this.testSuites = bindGroup(this, TM_GROUPS.testSuites);
    this.defects = bindGroup(this, TM_GROUPS.defects);
    this.automation = bindGroup(this, TM_GROUPS.automation);
    this.attachments = { ...bindGroup(this, TM_GROUPS.attachments), ...bindUploads(this, TM_UPLOADS.attachments) };
    const jira: Record<string, unknown> = {};
    for (const [name, op] of Object.entries(JIRA)) {
      jira[name] = (input?: Record<string, unknown>, o?: { signal?: AbortSignal }) => this.call(op, input ?? {}, o, '');
    }
    this.jira = jira as Methods<typeof JIRA>;
  }
}
