import { AmbiguousError, NotFoundError, ValidationError } from '../../client/errors.js';
import type { TestManagementClient } from '../../client/tm.js';
import type { CasebridgeConfig } from '../config/schema.js';
import { closeAsDuplicate } from '../jira/duplicate.js';
import type { Clock } from '../kernel/clock.js';
import { serialByKey } from '../kernel/keyed.js';
import type { CycleInfo, RunnerInfo } from '../kernel/types.js';
import type { WorkItem } from '../kernel/work.js';
import type { DefectCap } from './cap.js';
import type { Verdict } from './classify.js';
import { primaryError } from './fingerprint.js';
import { type FailureGroup, groupOf } from './groups.js';
import type { Decided, DefectOutcome } from './ledger.js';
import type { DefectRefusals } from './refusals.js';
import type { GroupDefect, GroupSearch } from './search.js';
import { type DefectTextInput, defectDescription, defectSummary, marker, templateVars } from './text.js';
import { afterSearch, type GroupAction, type GroupFacts, judgeGroup, type Triage } from './triage.js';

/**
 * One defect per failure group, `[cb-<hash>]` ending its summary (JQL finds it on every Jira; labels are the user's).
 * One search-and-create per group at a time; of two open defects the oldest wins (docs/architecture.md).
 */

/** Per group, process-wide; what was found is kept per run only, as a later run's defect may have been closed. */
const inFlight = serialByKey<string>();

export interface DefectInput {
  tm: TestManagementClient;
  config: CasebridgeConfig;
  item: WorkItem;
  runId: number;
  /** The run step that failed, when the failure belongs to a step: the defect is filed from the step. */
  stepRunId?: number;
  /** What the failure's facts said (triage.ts): `link` a bug known from its history, or `find` the group's defect. */
  triaged: Triage;
  /** The cycle of the run (cycle mode): its defect list is the state shared with other machines. */
  cycle?: CycleInfo;
  /** The flood guard; its ledger says what became of each group in this run (a second failure takes it). */
  cap: DefectCap;
  /** The groups' defect searches of the run, batched (search.ts). */
  searches: GroupSearch;
  refusals: DefectRefusals;
  runner: RunnerInfo;
  signal: AbortSignal;
  clock: Clock;
  /** When the failure's run is due its status (clock time): its group's first look goes in time for it. */
  dueAt?: number;
  /** When the failure came in (clock time): in a shared cycle a new defect waits an index lag from it. */
  cameAt?: number;
  /**
   * A defect was filed: `recheck` answers the older open defect it was closed as a duplicate of. Run it outside the
   * search-and-create (it waits up to `jira.indexLagMs`), then relink.
   */
  filed?: (key: string, recheck: () => Promise<string | undefined>) => void;
}

/** The search-and-create lock and the run's `known` entry of a failure group. */
const groupKey = (project: string, group: FailureGroup) => `${project}:${group.hash}`;

/** A failure's verdict, final before its defect is linked or filed, and what became of its defect. */
export interface Judged {
  verdict: Verdict | undefined;
  defect: DefectOutcome;
}

export type { Decided, DefectOutcome, Later } from './ledger.js';

export function findOrFileDefect(input: DefectInput): Promise<Judged> {
  const t = input.triaged;
  const group = groupOf(input.item.test, input.config.defects.group);
  const project = input.config.defects.projectKey ?? input.config.projectKey;
  const k = groupKey(project, group);
  // A bug known from this case's history is this failure's own, not the group's.
  if (t.action.kind === 'link') {
    input.cap.noteLinked(t.action.key, group);
    return Promise.resolve({ verdict: t.verdict, defect: { key: t.action.key, created: false } });
  }
  return inFlight([k], async () => {
    // A second failure of the group in this run takes the first's outcome.
    const known = input.cap.ledger.groups;
    const earlier = known.get(k);
    if (earlier) {
      const verdict = afterSearch(t.verdict, earlier.regressionOf);
      return {
        verdict,
        defect: 'later' in earlier ? { ...earlier, later: earlier.later.then(linkedAs) } : linkedAs(earlier),
      };
    }
    // Its facts (the group's defects), one verdict and action (judgeGroup, pure), then the action.
    let judged = judgeGroup(t, await groupFacts(input, project, group));
    // Another process reports into this cycle now and may file this group's defect a moment before this one would:
    // wait an index lag from the failure, then look again (the cycle's defect list at once, the search after its lag)
    // rather than file one to close as its duplicate.
    if (judged.action.kind === 'file' && input.cycle?.shared) {
      const { clock, signal } = input;
      await clock.sleep((input.cameAt ?? clock.now()) + clock.timing.indexLagMs - clock.now(), signal);
      signal.throwIfAborted();
      judged = judgeGroup(t, await groupFacts(input, project, group, clock.now()));
    }
    const found = await act(input, project, group, judged.action);
    known.set(k, found);
    if ('later' in found) {
      found.later.then(
        (decided) => known.get(k) === found && known.set(k, decided),
        // Not decided (a create or a read failed): the result is tried again, and asks again.
        () => known.get(k) === found && known.delete(k),
      );
    }
    return { verdict: judged.verdict, defect: found };
  });
}

/** What a second failure of a group gets from the first's outcome: its defect linked, not created. */
function linkedAs(earlier: Decided): Decided {
  if (earlier.key === undefined) return earlier;
  return { key: earlier.key, created: false, ...(earlier.regressionOf ? { regressionOf: earlier.regressionOf } : {}) };
}

/**
 * Reads the group again every indexPollMs until a read shows this create, as two runs may each have filed one
 * behind Jira's lagging index; an older open defect then wins (docs/architecture.md).
 */
function recheckLater(
  input: DefectInput,
  project: string,
  group: FailureGroup,
  key: string,
): () => Promise<string | undefined> {
  const { tm, signal, cap, clock } = input;
  const k = groupKey(project, group);
  const deadline = clock.now() + clock.timing.indexLagMs;
  return async () => {
    let hits: GroupDefect[] = [];
    do {
      hits = await input.searches.afterIndex(
        project,
        group.hash,
        Math.min(clock.timing.indexPollMs, deadline - clock.now()),
      );
      signal.throwIfAborted();
    } while (!hits.some((d) => d.key === key) && clock.now() < deadline);
    return inFlight([k], async () => {
      const found = await closeTwice(input, hits);
      const oldest = found.find((d) => d.open);
      if (!oldest || oldest.key === key) return undefined;
      // The search closed it when it was among its hits (a newer open one beside the oldest); else it is closed here.
      if (!found.some((d) => d.key === key)) await closeAsDuplicate(tm, key, signal, oldest.key);
      cap.ledger.duplicate(key, oldest.key);
      cap.ledger.groups.set(k, { key: oldest.key, created: false });
      return oldest.key;
    });
  };
}

/** The project's defects of a group, oldest first (batched, search.ts); newer open ones are closed as duplicates. */
async function search(input: DefectInput, project: string, hash: string, first = false) {
  const { searches, dueAt } = input;
  return closeTwice(input, await (first ? searches.first(project, hash, dueAt) : searches.of(project, hash)));
}

/** The hits of a group's search, its newer open defects beside the oldest closed as duplicates (see search). */
async function closeTwice(input: DefectInput, hits: GroupDefect[]): Promise<GroupDefect[]> {
  const [oldest, ...twice] = hits.filter((d) => d.open);
  for (const dup of twice) {
    await closeAsDuplicate(input.tm, dup.key, input.signal, oldest?.key);
    dup.open = false;
  }
  return hits;
}

/**
 * A group's defects: linked in the cycle already (no search needed), else the project's, from the batched search.
 * `since`: a look again, from a read of the cycle's list sent then or later.
 */
async function groupFacts(
  input: DefectInput,
  project: string,
  group: FailureGroup,
  since?: number,
): Promise<GroupFacts> {
  const inCycle = await input.cap.inCycle(input.cycle, marker(group.hash), since);
  if (inCycle) return { inCycle, found: [] };
  return { found: await search(input, project, group.hash, since === undefined) };
}

/** Links the group's defect, or files one under the cap (`later` when the cap's ranking decides, cap.ts). */
async function act(input: DefectInput, project: string, group: FailureGroup, a: GroupAction): Promise<DefectOutcome> {
  const { cap } = input;
  if (a.kind === 'link') {
    cap.noteLinked(a.key, group);
    return { key: a.key, created: false };
  }
  const { regressionOf } = a;
  const regression = regressionOf ? { regressionOf } : {};
  // The slot first: a group the run's ranking decides later (cap.ts) must not hold the turn other creates wait on.
  const slot = await cap.reserve(input.cycle, group);
  if (slot === false) return { notFiled: true, ...regression };
  if (slot === true) return file(input, project, group, regressionOf);
  // Decided once every result is in: filed then under the group's search-and-create, as a create now would be.
  const k = groupKey(project, group);
  const later = slot.later.then((ok): Promise<Decided> | Decided =>
    ok ? inFlight([k], () => file(input, project, group, regressionOf)) : { notFiled: true, ...regression },
  );
  return { later, ...regression };
}

/** Files the failure's defect in the slot it took (its create one at a time until Jira accepted one, refusals.ts). */
async function file(
  input: DefectInput,
  project: string,
  group: FailureGroup,
  regressionOf: string | undefined,
): Promise<Decided> {
  const { cap } = input;
  const regression = regressionOf ? { regressionOf } : {};
  return input.refusals.inTurn(async () => {
    // After a refused create every other would be refused too (the same defects.fields): not sent.
    const refused = input.refusals.blocking;
    if (refused) {
      cap.settle(undefined);
      return { notFiled: true, refusal: refused };
    }
    const made = await createDefect(input, project, group, regressionOf);
    return made.key !== undefined && made.created ? { ...made, ...regression } : made;
  });
}

async function createDefect(
  input: DefectInput,
  project: string,
  group: FailureGroup,
  regressionOf: string | undefined,
): Promise<Decided> {
  const { tm, signal, cap } = input;
  const hash = group.hash;
  const fields = defectFields(input, project, group, regressionOf);
  // Filed from the run itself (createRunBug): the service links it to the run, no run update needed for that.
  let onRun = false;
  const send = async () => {
    try {
      onRun = false;
      if (input.stepRunId !== undefined) {
        return (await tm.defects.createRunStepBug({ runStepId: input.stepRunId, fields }, { signal })).key;
      }
      const answer = await tm.defects.createRunBug({ runId: input.runId, fields }, { signal });
      onRun = true;
      return answer.key;
    } catch (err) {
      // The older service variant cannot file a defect from a run (404 on the route): create the issue in Jira;
      // the run update that follows links it to the run.
      if (!(err instanceof NotFoundError)) throw err;
      return (await tm.jira.createIssue({ fields }, { signal })).key;
    }
  };
  // The cap's slot settles as the create answers. A refusal costs this defect, not the run's other failures; only
  // one of the fields stops the other creates (DefectRefusals.refused).
  const refusedOr = (err: unknown): Decided => {
    cap.settle(undefined);
    if (err instanceof ValidationError) return { notFiled: true, refusal: input.refusals.refused(err) };
    throw err;
  };
  let key: string;
  try {
    key = await send();
  } catch (err) {
    // The create may have committed (answer lost, or a 500); a 500 naming its fields is a refusal: not sent again.
    const mayExist =
      err instanceof AmbiguousError ||
      (err instanceof ValidationError && err.mayHaveApplied && !input.refusals.namesFields(err));
    if (!mayExist) return refusedOr(err);
    // Never file twice: read before sending again, after the index lag (a read at once missed the lost create and
    // filed a second). A failed read is thrown: the result is tried again later.
    await input.clock.sleep(input.clock.timing.indexLagMs, signal);
    const again = await search(input, project, hash).catch((e: unknown) => {
      cap.settle(undefined);
      throw e;
    });
    const open = again.find((d) => d.open);
    if (open) {
      cap.settle(open.key);
      return { key: open.key, created: true };
    }
    try {
      key = await send();
    } catch (e) {
      return refusedOr(e);
    }
  }
  cap.settle(key);
  // Another machine may have filed the same failure at once: one deciding read once the index shows this create.
  input.filed?.(key, recheckLater(input, project, group, key));
  return { key, created: true, ...(onRun ? { onRun: true } : {}) };
}

function defectFields(input: DefectInput, project: string, group: FailureGroup, regressionOf: string | undefined) {
  const d = input.config.defects;
  const text: DefectTextInput = {
    test: input.item.test,
    error: primaryError(input.item.test),
    key: input.item.key,
    runId: input.runId,
    runner: input.runner.name,
    group,
    regressionOf,
  };
  const vars = templateVars(text);
  return {
    ...d.fields,
    project: { key: project },
    summary: defectSummary(summaryTemplateOf(d.summaryTemplate, group), vars, group.hash),
    description: defectDescription(d.descriptionTemplate, vars, text),
    issuetype: { name: d.issueType },
  };
}

/** The default summary template (config/schema.ts). */
const DEFAULT_SUMMARY = '${title}: ${error}';

/** An environment error's defect belongs to every test that hit it: the default summary names the error, not a test. */
function summaryTemplateOf(template: string, group: FailureGroup): string {
  return group.environment && template === DEFAULT_SUMMARY
    ? `Environment error (${group.environment}): \${error}`
    : template;
}
