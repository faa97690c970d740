import type { Handler } from '../service/context.js';
import { automationHandlers } from './automation.js';
import { bitbucketHandlers } from './bitbucket.js';
import { casesHandlers } from './cases.js';
import { createTestRunsHandlers } from './create-test-runs.js';
import { cyclesHandlers } from './cycles.js';
import { jiraHandlers } from './jira.js';
import { plansHandlers } from './plans.js';
import { repoHandlers } from './repo.js';
import { requirementsHandlers } from './requirements.js';
import { reviewCommentHandlers } from './review-comments.js';
import { runsHandlers } from './runs.js';
import { suitesHandlers } from './suites.js';

/** Every operation's handler, by operation id. */
export const handlers: Record<string, Handler> = {
  ...plansHandlers,
  ...cyclesHandlers,
  ...createTestRunsHandlers,
  ...automationHandlers,
  ...runsHandlers,
  ...casesHandlers,
  ...requirementsHandlers,
  ...suitesHandlers,
  ...repoHandlers,
  ...jiraHandlers,
  ...bitbucketHandlers,
  ...reviewCommentHandlers,
};
