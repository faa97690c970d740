import {
  jiraBulkCreateIssues,
  jiraCreateIssue,
  jiraCreateMeta,
  jiraCreateMetaFields,
  jiraCreateMetaIssueTypes,
  jiraCurrentSession,
  jiraDoTransition,
  jiraEditIssue,
  jiraGetIssue,
  jiraLogin,
  jiraLogout,
  jiraMyselfOp,
  jiraProjectOp,
  jiraSearch,
  jiraSearchPost,
  jiraTransitions,
} from '../contract/jira.js';
import type { Authenticator } from './auth.js';
import { bindGroup, type ClientOptions, type Methods, ServiceClient } from './base.js';
import { ConfigError, UnauthorizedError } from './errors.js';

/** The Jira subset casebridge uses: preflight, defects, the create screen's fields (two APIs, before and after 8.4). */
export const JIRA = {
  myself: jiraMyselfOp,
  project: jiraProjectOp,
  createIssue: jiraCreateIssue,
  bulkCreateIssues: jiraBulkCreateIssues,
  createMetaIssueTypes: jiraCreateMetaIssueTypes,
  createMetaFields: jiraCreateMetaFields,
  createMeta: jiraCreateMeta,
  issue: jiraGetIssue,
  editIssue: jiraEditIssue,
  transitions: jiraTransitions,
  transition: jiraDoTransition,
  search: jiraSearch,
  searchPost: jiraSearchPost,
  session: jiraCurrentSession,
  logout: jiraLogout,
} as const;

/**
 * Logs in through Jira's session resource and returns the JSESSIONID; the test-management client shares the session.
 */
export async function jiraSessionLogin(client: ServiceClient, authenticator: Authenticator): Promise<string> {
  const a = authenticator.auth;
  if (a.type !== 'session') {
    throw new ConfigError(`auth type ${a.type} cannot log in to Jira; use basic, bearer or session`);
  }
  try {
    const res = await client.call(jiraLogin, { username: a.username, password: a.password }, {}, '', false);
    // The body names the session cookie too, for a server or proxy that sets none.
    authenticator.jar?.setIfAbsent(res.session.name || 'JSESSIONID', res.session.value);
    return res.session.value;
  } catch (err) {
    if (err instanceof UnauthorizedError) {
      throw new UnauthorizedError('Jira refused the user name and password (session login)', {
        operation: jiraLogin.id,
        method: 'POST',
        path: jiraLogin.path,
        status: 401,
      });
    }
    throw err;
  }
}

/** Client of the Jira platform subset: `new JiraClient({ baseUrl, auth })` with the Jira base URL. */
export class JiraClient extends ServiceClient {
  readonly jira: Methods<typeof JIRA>;

  constructor(options: ClientOptions) {
    super(options, 'jira', '', (self) => jiraSessionLogin(self, (self as JiraClient).authenticator));
    if (options.auth.type === 'ticket') {
      throw new ConfigError('ticket auth is for the content repository; use basic, bearer or session for Jira');
    }
    this.jira = bindGroup(this, JIRA);
  }
}
