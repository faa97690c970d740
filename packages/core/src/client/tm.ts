import { groupOperations, tmOperations } from '../contract/index.js';
import { bindGroup, type ClientOptions, type Methods, ServiceClient } from './base.js';
import { ConfigError } from './errors.js';
import { JIRA, jiraSessionLogin } from './jira.js';

/** The default API prefix of the test-management service (synapseRT's REST segment). */
export const TM_PREFIX = '/rest/synapse/latest/public';

/** The test-management operations grouped by id (`defects.ofCycle` is `client.defects.ofCycle`), from the contract. */
export const TM_GROUPS = groupOperations(tmOperations);

type G = typeof TM_GROUPS;

/** The test-management client; `baseUrl` is Jira's, the prefix synapseRT's public API. Jira's subset is `jira`. */
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
  readonly attachments: Methods<G['attachments']>;
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
    this.attachments = bindGroup(this, TM_GROUPS.attachments);
    const jira: Record<string, unknown> = {};
    for (const [name, op] of Object.entries(JIRA)) {
      jira[name] = (input?: Record<string, unknown>, o?: { signal?: AbortSignal }) => this.call(op, input ?? {}, o, '');
    }
    this.jira = jira as Methods<typeof JIRA>;
  }
}
