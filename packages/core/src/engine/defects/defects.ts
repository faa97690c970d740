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
import type { DefectRefusals, Refusal } from './refusals.js';
import type { GroupDefect, GroupSearch } from './search.js';
import { type DefectTextInput, defectDescription, defectSummary, marker, templateVars } from './text.js';
import { afterSearch, type GroupAction, type GroupFacts, judgeGroup, type Triage } from './triage.js';

/**
 * One defect per distinct failure. The failure's group (groups.ts: an environment error whatever the test, another
 * error by type, normalised message and source line; per test when it has no frame in the project) is written into
 * the end of the defect's summary as `[cb-<hash>]`, whatever `defects.summaryTemplate` says: a summary is
 * searchable with JQL (`summary ~`) on every Jira, and labels are the user's (`defects.fields.labels`). Before creating, the project is searched for it: an
 * open match is linked, a closed one makes the new defect a regression that names it. Within one process, one
 * search-and-create per fingerprint runs at a time, and a create whose answer was lost is searched for before it is
 * sent again. Across machines, a search after each create finds a defect another machine filed for the same failure
 * at the same moment: the oldest open one is kept by both, the other closed as Duplicate.
 *
 * The flood guard (DefectCap): in a cycle, a group whose marker is already in the cycle's defect list links that
 * defect without a search; a new defect takes a slot under `defects.maxPerRun` first, and without one the failure
 * is not filed (its run still gets its status and a comment saying why).
 *
 * A failure whose case's history names a known bug (history.ts) links it when it is open, and files a new defect
 * naming it as a regression when every known bug is closed.
 *
 * A create Jira refuses for its fields (refusals.ts) is not sent again: the failure is not filed, its run
 * gets its status and a comment naming the fields, and no other defect is created in the run.
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
   * What the failure's facts said (triage.ts): `link` a bug known from its case's history (no search, no new defect,
   * no slot under the cap), or `find` the group's defect (`regressionOf`: its known bugs are all closed).
   */
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
  /**
   * A defect was filed: `recheck` reads the project again once Jira's index shows every create made before this one
   * (see recheckLater) and answers the older open defect this one was closed as the duplicate of, if any. The caller
   * runs it outside this search-and-create (it waits `jira.indexLagMs`) and relinks what it linked to `key`.
   */
  filed?: (key: string, recheck: () => Promise<string | undefined>) => void;
}

/**
 * What became of a failure: its defect (filed now or existing), or none because the cap was reached or (`refusal`)
 * Jira refused the create's fields. `regressionOf`: the group's defects are all closed, the newest is this one (the
 * failure is a regression of it; history.ts leaves the state of the group's own defects to this search).
 */
export type DefectOutcome = Decided | Later;

/** A defect found, filed, or none (the cap, a refused create). */
export type Decided =
  | { key: string; created: boolean; regressionOf?: string; onRun?: true }
  | { key?: undefined; notFiled: true; refusal?: Refusal | undefined; regressionOf?: string };

/**
 * The cap's ranking decides the failure's defect once every result is in (DefectCap.reserve answered `later`): its run
 * is written now, without it, and `later` answers the defect (filed or not) when the ranking has spoken.
 */
export interface Later {
  key?: undefined;
  later: Promise<Decided>;
  regressionOf?: string;
}

/** The search-and-create lock and the run's `known` entry of a failure group. */
const groupKey = (project: string, group: FailureGroup) => `${project}:${group.hash}`;

/** A failure's verdict, final before its defect is linked or filed, and what became of its defect. */
export interface Judged {
  verdict: Verdict | undefined;
  defect: DefectOutcome;
}

export function findOrFileDefect(input: DefectInput): Promise<Judged> {
  const t = input.triaged;
  const group = groupOf(input.item.test, input.config.defects.group);
  const project = input.config.defects.projectKey ?? input.config.projectKey;
  const k = groupKey(project, group);
  // A bug known for this case (a person linked it to the case's failed run, or to a run that failed the same way):
  // this failure's own, not the group's; other tests of the group go on to the group's defect.
  if (t.action.kind === 'link') {
    input.cap.noteLinked(t.action.key, group);
    return Promise.resolve({ verdict: t.verdict, defect: { key: t.action.key, created: false } });
  }
  return inFlight([k], async () => {
    // A second failure of the group in this run links the defect of the first (or, capped, gets none either; or
    // waits with it for the ranking).
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
    const judged = judgeGroup(t, await groupFacts(input, project, group));
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
 * The read after a create cannot see a defect filed in the second before it: Jira's index lags (about a second on
 * Data Center, per node). Two runs that start close together (a job run again at once, two pipelines) would then
 * each keep their own open defect for one failure, and nothing in this run would read the group again: its later
 * failures link the defect through the cycle's list, without a search. So a new defect the read after its create did
 * not show yet is read again once the index has caught up: every TIMING.indexPollMs until a read shows it (a read
 * that shows this create shows every one made before it), at the latest `jira.indexLagMs` after its create. Then,
 * under the group's search-and-create, an older open one wins, this one is closed as its duplicate, and the rest of
 * the run links the survivor. On a Jira whose index lags a second the run's end waits about that, not the whole
 * setting. The read waits up to TIMING.gatherMaxMs more while the run goes on (nothing waits on it), so it shares the
 * search of the failures coming in and of the other defects filed meanwhile (search.ts).
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
      await clock.sleep(Math.min(clock.timing.indexPollMs, deadline - clock.now()), signal);
      signal.throwIfAborted();
      hits = await input.searches.of(project, group.hash, true);
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

/**
 * The project's defects of a failure group, oldest (lowest id) first (search.ts: the groups asked for together share
 * one search). A newer open defect beside the oldest was filed twice (two machines at once, or a lagging search let
 * a run file it again): it is closed here as the oldest one's duplicate, whichever read finds it (this run's or a
 * later one's).
 */
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

/** A group's defects: linked in the cycle already (no search needed), else the project's, from the batched search. */
async function groupFacts(input: DefectInput, project: string, group: FailureGroup): Promise<GroupFacts> {
  const inCycle = await input.cap.inCycle(input.cycle, marker(group.hash));
  return inCycle ? { inCycle, found: [] } : { found: await search(input, project, group.hash, true) };
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
  const answered = await input.refusals.turn();
  try {
    // After a refused create every other would be refused too (the same defects.fields): not sent.
    const refused = input.refusals.blocking;
    if (refused) {
      cap.settle(undefined);
      return { notFiled: true, refusal: refused };
    }
    const made = await createDefect(input, project, group, regressionOf);
    return made.key !== undefined && made.created ? { ...made, ...regression } : made;
  } finally {
    answered();
  }
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
  // The slot taken under the cap is settled the moment the create answers (see DefectCap.reserve).
  // Refused (for its fields: 500 from synapseRT, 400 from Jira; or a 500 twice): costs this defect, not the run's
  // other failures; only a refusal of the fields stops the other creates (see DefectRefusals.refused).
  const refusedOr = (err: unknown): Decided => {
    cap.settle(undefined);
    if (err instanceof ValidationError) return { notFiled: true, refusal: input.refusals.refused(err) };
    throw err;
  };
  let key: string;
  try {
    key = await send();
  } catch (err) {
    // The create may have committed: its answer was lost, or it answered 500 (the client did not send it again). A
    // 500 that names the create's fields is Jira refusing them (every create would be): not sent again.
    const mayExist =
      err instanceof AmbiguousError ||
      (err instanceof ValidationError && err.mayHaveApplied && !input.refusals.namesFields(err));
    if (!mayExist) return refusedOr(err);
    // Read before sending again: never file twice. Jira's search shows a create about a second late (each node polls
    // its index once a second), so the read waits for it first: read at once, it missed the defect the lost answer
    // made and filed a second one. A failed read is not a refusal of the defect: thrown, the result is tried again
    // later (and its defect searched for first).
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
  // Another machine may have filed the same failure at the same moment (two jobs of one pipeline, one failing test):
  // the oldest open defect wins on both, and this one is closed as its duplicate. A read right after the create
  // cannot show it (the index lags), so the one read that decides comes once the index shows it (recheckLater): one
  // search per new defect, shared with the other searches of the moment (search.ts).
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

/**
 * An environment error's defect is every test's that hit it, not the first one's: with the default template its
 * summary names the error and its kind instead of a test (`Environment error (connection refused): connect
 * ECONNREFUSED 10.0.0.5:5432`). A template the user set is used as it is.
 */
function summaryTemplateOf(template: string, group: FailureGroup): string {
  return group.environment && template === DEFAULT_SUMMARY
    ? `Environment error (${group.environment}): \${error}`
    : template;
}
