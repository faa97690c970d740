import { AmbiguousError, NotFoundError } from '../client/errors.js';
import type { TestManagementClient } from '../client/tm.js';
import type { CasebridgeConfig } from './config.js';
import { expandTemplate } from './config.js';
import type { CycleInfo } from './cycles.js';
import type { DefectCap } from './defect-cap.js';
import { closeAsDuplicate } from './duplicate.js';
import { primaryError } from './fingerprint.js';
import { type FailureGroup, groupOf } from './groups.js';
import { serialByKey } from './keyed.js';
import { displayName } from './model.js';
import { ciBuildUrl, truncate } from './text.js';
import type { RunnerInfo } from './types.js';
import type { WorkItem } from './work.js';

/**
 * One defect per distinct failure. The failure's group (groups.ts: an environment error whatever the test, another
 * error by type, normalised message and source line; per test when it has no frame in the project) is written into
 * the defect's summary as `[cb-<hash>]`: defects created through a run cannot carry labels, and a
 * summary is searchable with JQL (`summary ~`) on every Jira. Before creating, the project is searched for it: an
 * open match is linked, a closed one makes the new defect a regression that names it. Within one process, one
 * search-and-create per fingerprint runs at a time, and a create whose answer was lost is searched for before it is
 * sent again. Across machines, a search after each create finds a defect another machine filed for the same failure
 * at the same moment: the oldest open one is kept by both, the other closed as Duplicate.
 *
 * The flood guard (DefectCap): in a cycle, a group whose marker is already in the cycle's defect list links that
 * defect without a search; a new defect takes a slot under `defects.maxPerRun` first, and without one the failure
 * is not filed (its run still gets its status and a comment saying why).
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
  /**
   * Defects this run found or filed, by group key: a second failure of the group links it. `''`: the group got
   * none (the cap), and its other failures get none either.
   */
  known: Map<string, string>;
  /** The cycle of the run (cycle mode): its defect list is the state shared with other machines. */
  cycle?: CycleInfo;
  cap: DefectCap;
  runner: RunnerInfo;
  signal: AbortSignal;
}

export function marker(hash: string): string {
  return `cb-${hash}`;
}

/** What became of a failure: its defect (filed now or existing), or none because the cap was reached. */
export type DefectOutcome = { key: string; created: boolean } | { key?: undefined; notFiled: true };

export function findOrFileDefect(input: DefectInput): Promise<DefectOutcome> {
  const group = groupOf(input.item.test, input.config.defects.group);
  const project = input.config.defects.projectKey ?? input.config.projectKey;
  const k = `${project}:${group.hash}`;
  return inFlight([k], async () => {
    // A second failure of the group in this run links the defect of the first (or, capped, gets none either).
    const earlier = input.known.get(k);
    if (earlier) return { key: earlier, created: false };
    if (earlier === '') return { notFiled: true };
    const found = await fileOrLink(input, project, group);
    input.known.set(k, found.key ?? '');
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

async function fileOrLink(input: DefectInput, project: string, group: FailureGroup): Promise<DefectOutcome> {
  const { tm, signal, cap } = input;
  const hash = group.hash;
  // Another machine (or an earlier run into this cycle) linked the group's defect here already: no search needed.
  const inCycle = await cap.inCycle(input.cycle, marker(hash));
  if (inCycle) {
    cap.noteLinked(inCycle);
    return { key: inCycle, created: false };
  }
  const found = await search(tm, project, hash, signal);
  const open = found.find((d) => d.open);
  if (open) {
    cap.noteLinked(open.key);
    return { key: open.key, created: false };
  }
  if (!(await cap.reserve(input.cycle))) return { notFiled: true };
  return createDefect(input, project, group, found[found.length - 1]?.key);
}

async function createDefect(
  input: DefectInput,
  project: string,
  group: FailureGroup,
  regressionOf: string | undefined,
): Promise<{ key: string; created: boolean }> {
  const { tm, signal, cap } = input;
  const hash = group.hash;
  const fields = defectFields(input, project, group, regressionOf);
  const send = async () => {
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
  // The slot taken under the cap is settled the moment the create answers (see DefectCap.reserve).
  let key: string;
  try {
    try {
      key = await send();
    } catch (err) {
      if (!(err instanceof AmbiguousError)) throw err;
      const again = (await search(tm, project, hash, signal)).find((d) => d.open);
      if (again) {
        cap.settle(again.key);
        return { key: again.key, created: true };
      }
      key = await send();
    }
  } catch (err) {
    cap.settle(undefined);
    throw err;
  }
  cap.settle(key);
  // Another machine may have filed the same failure at the same moment (two jobs of one pipeline, one failing test):
  // the oldest open defect wins on both, and this one is closed as its duplicate. One search per new defect.
  const oldest = (await search(tm, project, hash, signal)).find((d) => d.open);
  if (oldest && oldest.key !== key) {
    await closeAsDuplicate(tm, key, signal);
    // The closed duplicate stays in the cycle's defect list: it is not a new defect of the cycle.
    cap.duplicate(key);
    return { key: oldest.key, created: false };
  }
  return { key, created: true };
}

function defectFields(input: DefectInput, project: string, group: FailureGroup, regressionOf: string | undefined) {
  const hash = group.hash;
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
    group.environment
      ? `Environment error (${group.environment}): every test failing with it links this defect.`
      : group.perTest
        ? undefined
        : `Failure group: ${group.type} at ${group.frame}; other tests failing the same way there link this defect.`,
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
