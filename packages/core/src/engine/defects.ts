import { AmbiguousError, NotFoundError } from '../client/errors.js';
import type { TestManagementClient } from '../client/tm.js';
import type { CasebridgeConfig } from './config.js';
import { expandTemplate } from './config.js';
import { closeAsDuplicate } from './duplicate.js';
import { fingerprintOf, primaryError } from './fingerprint.js';
import { serialByKey } from './keyed.js';
import { displayName } from './model.js';
import { ciBuildUrl, truncate } from './text.js';
import type { RunnerInfo } from './types.js';
import type { WorkItem } from './work.js';

/**
 * One defect per distinct failure. The fingerprint (test id, normalised error, first frame in the test file) is
 * written into the defect's summary as `[cb-<hash>]`: defects created through a run cannot carry labels, and a
 * summary is searchable with JQL (`summary ~`) on every Jira. Before creating, the project is searched for it: an
 * open match is linked, a closed one makes the new defect a regression that names it. Within one process, one
 * search-and-create per fingerprint runs at a time, and a create whose answer was lost is searched for before it is
 * sent again. Across machines, a search after each create finds a defect another machine filed for the same failure
 * at the same moment: the oldest open one is kept by both, the other closed as Duplicate.
 */

/**
 * The search-and-create under way per fingerprint, process-wide (engines of one process queue behind each other);
 * an entry goes when it settles. What was found or filed is remembered per run only (`DefectInput.known`): a later
 * run in the same process (watch mode, a replay) searches again, because the defect may have been closed or
 * deleted meanwhile.
 */
const inFlight = serialByKey<string>();

export interface DefectInput {
  tm: TestManagementClient;
  config: CasebridgeConfig;
  item: WorkItem;
  runId: number;
  /** The run step that failed, when the failure belongs to a step: the defect is filed from the step. */
  stepRunId?: number;
  /** Defects this run found or filed, by fingerprint key: a second failure with the same fingerprint links it. */
  known: Map<string, string>;
  runner: RunnerInfo;
  signal: AbortSignal;
}

export function marker(hash: string): string {
  return `cb-${hash}`;
}

export function findOrFileDefect(input: DefectInput): Promise<{ key: string; created: boolean }> {
  const fp = fingerprintOf(input.item.test);
  const project = input.config.defects.projectKey ?? input.config.projectKey;
  const k = `${project}:${fp.hash}`;
  return inFlight([k], async () => {
    // A second failure with the same fingerprint in this run links the defect of the first.
    const earlier = input.known.get(k);
    if (earlier) return { key: earlier, created: false };
    const found = await fileOrLink(input, project, fp.hash);
    input.known.set(k, found.key);
    return found;
  });
}

async function search(tm: TestManagementClient, project: string, hash: string, signal: AbortSignal) {
  const jql = `project = "${project}" AND summary ~ "${marker(hash)}" ORDER BY created ASC`;
  const found = await tm.jira.search({ jql, fields: 'summary,status,resolution', maxResults: 20 }, { signal });
  return found.issues.map((i) => {
    const f = (i as { fields?: Record<string, unknown> }).fields ?? {};
    return { key: i.key, open: f.resolution === null || f.resolution === undefined };
  });
}

async function fileOrLink(
  input: DefectInput,
  project: string,
  hash: string,
): Promise<{ key: string; created: boolean }> {
  const { tm, signal } = input;
  const found = await search(tm, project, hash, signal);
  const open = found.find((d) => d.open);
  if (open) return { key: open.key, created: false };
  const closed = found[found.length - 1];
  const fields = defectFields(input, project, hash, closed?.key);
  const create = async () => {
    try {
      const answer =
        input.stepRunId !== undefined
          ? await tm.defects.createRunStepBug({ runStepId: input.stepRunId, fields }, { signal })
          : await tm.defects.createRunBug({ runId: input.runId, fields }, { signal });
      return answer.key;
    } catch (err) {
      // The older service variant cannot file a defect from a run (404 on the route): create the issue in Jira;
      // the run update that follows links it to the run.
      if (!(err instanceof NotFoundError)) throw err;
      return (await tm.jira.createIssue({ fields }, { signal })).key;
    }
  };
  let key: string;
  try {
    key = await create();
  } catch (err) {
    if (!(err instanceof AmbiguousError)) throw err;
    const again = (await search(tm, project, hash, signal)).find((d) => d.open);
    if (again) return { key: again.key, created: true };
    key = await create();
  }
  // Another machine may have filed the same failure at the same moment (two jobs of one pipeline, one failing test):
  // the oldest open defect wins on both, and this one is closed as its duplicate. One search per new defect.
  const oldest = (await search(tm, project, hash, signal)).find((d) => d.open);
  if (oldest && oldest.key !== key) {
    await closeAsDuplicate(tm, key, signal);
    return { key: oldest.key, created: false };
  }
  return { key, created: true };
}

function defectFields(input: DefectInput, project: string, hash: string, regressionOf: string | undefined) {
  const t = input.item.test;
  const err = primaryError(t);
  const firstLine = (err?.message ?? 'failed').split('\n').find((l) => l.trim() !== '') ?? 'failed';
  const title = t.titlePath[t.titlePath.length - 1] ?? displayName(t);
  const tag = ` [${marker(hash)}]`;
  const summary = `${truncate(
    expandTemplate(
      input.config.defects.summaryTemplate,
      { title, error: firstLine.trim(), file: t.file, key: input.item.key },
      {},
    ).replace(/\s+/g, ' '),
    255 - tag.length,
  )}${tag}`;
  const ci = ciBuildUrl(process.env);
  const description = [
    regressionOf ? `Regression: ${regressionOf} had the same failure and is closed.` : undefined,
    `Test: ${displayName(t)}${t.project ? ` [${t.project}]` : ''} (${input.runner.name})`,
    `Test case: ${input.item.key}, run ${input.runId}`,
    ci ? `CI build: ${ci}` : undefined,
    '',
    '{noformat}',
    truncate(err?.message ?? '(no error message)', 8000),
    '{noformat}',
    err?.stack ? `{noformat}\n${truncate(err.stack, 8000)}\n{noformat}` : undefined,
    `Fingerprint: ${marker(hash)}`,
  ]
    .filter((l) => l !== undefined)
    .join('\n');
  return {
    project: { key: project },
    summary,
    description,
    issuetype: { name: input.config.defects.issueType },
  };
}
