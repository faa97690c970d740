import type { AttributeSetRefused } from '../kernel/errors.js';
import { answerOf, type SplitOptions, type SplitOutcome } from '../kernel/split.js';
import type { CycleInfo } from '../kernel/types.js';
import { appendTo, runKeyOf, type WorkItem } from '../kernel/work.js';
import type { DeliveryService } from './compose.js';

/** What became of a bulk of status-only results (see Delivery.bulk). */
export interface BulkOutcome {
  /** Results whose run got its status, or that had nothing to write (no status, a worse one held elsewhere). */
  delivered: WorkItem[];
  /** Results whose key the plan refused as a test case: named in the summary, never journaled. */
  dropped: WorkItem[];
  /** Results the service refused on their own, repeatedly, with its answer; `line`: their attribute set was refused. */
  refused: Array<{ item: WorkItem; answer: string; line?: string }>;
  /** Results not delivered because the service failed for all alike: to be tried again, else journaled. */
  unsent: WorkItem[];
  /** Summary lines, each once per run (a status every run of which failed). */
  problems: string[];
}

/** Which runs got their status, which the service refused (with its answer), and lines for the summary. */
export interface Sent {
  sent: Set<number>;
  refused: Map<number, unknown>;
  problems: string[];
}

type Fields = { result?: string; comment?: string; bugs?: string[] };

/** A bulk's status writes: one bulk update per status (a run update per run on the older variant), and their fate. */
export class BulkStatuses {
  /** Statuses already named in the summary as failing for every run. */
  private readonly named = new Set<string>();
  /** The split's options: a run that fails alone while the service answers others is refused (see splitBatch). */
  readonly splitOptions: SplitOptions;

  constructor(
    private readonly svc: DeliveryService,
    /** The status this process wrote to each run (shared with Delivery: the worse status stays). */
    private readonly runStatus: Map<number, string>,
    /** The status to write to a run, or undefined when it holds that or worse already. */
    private readonly statusFor: (runId: number, status: string) => string | undefined,
    private readonly updateRun: (cycle: CycleInfo, runId: number, fields: Fields) => Promise<void>,
    private readonly onProgress: () => void,
  ) {
    this.splitOptions = svc.answeredSince ? { answeredSince: svc.answeredSince } : {};
  }

  /** The runs of `wanted` by status; a run holding this status or a worse one goes to `out.sent`. In the runs' turn. */
  toWrite(wanted: Map<number, string>, out: Sent): Map<string, number[]> {
    const byStatus = new Map<string, number[]>();
    for (const [runId, status] of wanted) {
      const s = this.statusFor(runId, status);
      if (s) appendTo(byStatus, s, runId);
      else out.sent.add(runId);
    }
    return byStatus;
  }

  /** One bulk update, or one update per run where the service has none (see DeliveryService.lacks). */
  async sendOne(cycle: CycleInfo, status: string, runIds: number[]): Promise<void> {
    if (!this.svc.lacks('bulkStatus')) {
      const input = { testPlanIssueKey: cycle.plan, testCycleId: cycle.id, status, runIds };
      await this.svc.inCycle(cycle).runs.bulkStatusUpdate(input, this.svc.o);
      if (!this.svc.lacks('bulkStatus')) {
        this.onProgress();
        return;
      }
    }
    for (const runId of runIds) await this.updateRun(cycle, runId, { result: status });
  }

  /** What the split of one status's runs did, into `out`; `started`: when the bulk began. */
  record(status: string, runIds: number[], split: SplitOutcome<number>, out: Sent, started: number): void {
    for (const runId of split.sent) {
      out.sent.add(runId);
      this.runStatus.set(runId, status);
    }
    for (const r of split.refused) out.refused.set(r.item, r.error);
    // Every run of the status failed while others were answered: the instance may not know the status. Said once.
    if (
      split.sent.length === 0 &&
      split.unsent.length === runIds.length &&
      this.svc.answeredSince?.(started) &&
      !this.named.has(status)
    ) {
      this.named.add(status);
      out.problems.push(
        `the service answered every update of run status '${status}' (${runIds.length} run(s)) with an error while it answered other requests (${answerOf(split.error)}): it may refuse the status (administrators rename and disable run statuses: check statusMap against the instance's statuses), or its bulk update is failing; the results are kept in the journal, \`casebridge replay\` delivers them once the cause is fixed`,
      );
    }
  }
}

/** What became of each item of a bulk; an item whose run is unknown is unsent, never counted as delivered. */
export function settleBulk(
  items: WorkItem[],
  runs: Map<string, number>,
  wanted: Map<number, string>,
  sent: Sent,
  badKeys: ReadonlySet<string>,
  statusOf: (item: WorkItem) => string | undefined,
  refusalOf: (runKey: string) => AttributeSetRefused | undefined = () => undefined,
): BulkOutcome {
  const out: BulkOutcome = { delivered: [], dropped: [], refused: [], unsent: [], problems: sent.problems };
  for (const item of items) {
    const key = runKeyOf(item);
    const runId = runs.get(key);
    if (runId === undefined) {
      const setRefused = refusalOf(key);
      if (badKeys.has(item.key)) out.dropped.push(item);
      else if (statusOf(item) === undefined) out.delivered.push(item);
      else if (setRefused) out.refused.push({ item, answer: setRefused.answer, line: setRefused.line });
      else out.unsent.push(item);
      continue;
    }
    if (!wanted.has(runId) || sent.sent.has(runId)) {
      item.progress.runId = runId;
      out.delivered.push(item);
      continue;
    }
    // Not delivered: no run id recorded, so a later try (or a replay) asks for the case's run again (it may be gone).
    const refusal = sent.refused.get(runId);
    if (refusal !== undefined) out.refused.push({ item, answer: answerOf(refusal) });
    else out.unsent.push(item);
  }
  return out;
}
