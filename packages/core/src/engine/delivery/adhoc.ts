import { AmbiguousError, NotFoundError, ValidationError } from '../../client/errors.js';
import { PermanentProblem } from '../kernel/errors.js';
import { serialByKey } from '../kernel/keyed.js';
import { displayName } from '../kernel/model.js';
import type { Service } from '../kernel/service.js';
import type { WorkItem } from '../kernel/work.js';

/**
 * Each result's ad hoc run, created or adopted after a lost answer. Creates of one case go one at a time, and a run
 * once claimed is never adopted again (it may be another result's, about to be written).
 */
export class AdhocRuns {
  private readonly perCase = serialByKey<string>();
  /** Ad hoc runs this process created or adopted: never adopted again. */
  private readonly claimed = new Set<number>();

  constructor(
    private readonly svc: Service,
    /** Throws NotJiraError when the URL is not Jira's (see jiraCheck): a 404 then means the URL, not the case. */
    private readonly checkJira: () => Promise<void>,
    /** Keys the service refused as test cases: named in the summary. */
    private readonly badKeys: Set<string>,
  ) {}

  /** The run id for the result; `replaying`: the result comes from the journal, its run may exist already. */
  run(item: WorkItem, replaying: boolean): Promise<number> {
    return this.perCase([item.key], () => this.runNow(item, replaying));
  }

  private async runNow(item: WorkItem, replaying: boolean): Promise<number> {
    // A replay after a crash may find the run it created last time: adopt it instead of creating another.
    const adopted = replaying ? await this.untouched(item.key) : undefined;
    if (adopted !== undefined) return adopted;
    const input = { testCaseIssueKey: item.key };
    try {
      return this.claim((await this.svc.tm.runs.adhocCreate(input, this.svc.o)).id);
    } catch (err) {
      if (err instanceof NotFoundError) {
        await this.checkJira();
        this.badKeys.add(item.key);
        throw new PermanentProblem(`${item.key}: no such test case (${displayName(item.test)})`);
      }
      // The create may have happened (a lost answer, or a 500): adopt the newest untouched run, or create again.
      if (!(err instanceof AmbiguousError || (err instanceof ValidationError && err.mayHaveApplied))) throw err;
      const found = await this.untouched(item.key);
      if (found !== undefined) return found;
      return this.claim((await this.svc.tm.runs.adhocCreate(input, this.svc.o)).id);
    }
  }

  private claim(id: number): number {
    this.claimed.add(id);
    return id;
  }

  /** The newest untouched ad hoc run of the case that this process has not taken yet; taken by this call. */
  private async untouched(key: string): Promise<number | undefined> {
    const runs = await this.svc.tm.runs.adhocTestRuns({ testCaseIssueKey: key }, this.svc.o);
    const fresh = runs.filter(
      (r) => r.status === 'Not Tested' && !r.executedBy && !r.comment && !this.claimed.has(r.id),
    );
    const id = fresh.sort((a, b) => b.id - a.id)[0]?.id;
    return id === undefined ? undefined : this.claim(id);
  }
}
