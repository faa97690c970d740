import { CasebridgeError, NotFoundError, ValidationError } from '../../client/errors.js';
import { now as systemNow } from '../../client/time.js';

/**
 * Finding the item a batch request is refused for. synapseRT answers 500 both to a refusal of one item of a batch (a
 * run that is not in the cycle, a key that is not a test case) and to a transient fault (a lock timeout, a node
 * restarting): the client cannot tell them apart (`ValidationError.uncertain`). Dropping the whole batch on a 500 lost
 * every result of a run; so a batch that fails this way is split in halves until the refused item is found, and only
 * an item that fails on its own, repeatedly, while others succeed, is given up as refused.
 *
 * Cost, for a batch of n: one refused item costs about 2·log2(n) more requests (60 runs: 12), an outage 3 (the batch,
 * a half and a quarter fail uncertainly, nothing succeeded: every item is kept for later, none is called refused).
 */

/** What became of a batch. */
export interface SplitOutcome<T> {
  /** Items that went through. */
  sent: T[];
  /** Items refused on their own (certainly, or repeatedly while others succeeded), with the service's answer. */
  refused: Array<{ item: T; error: unknown }>;
  /** Items not sent because the service failed for all of them alike (an outage): keep them for later. */
  unsent: T[];
  /** What the service answered to the unsent ones. */
  error?: unknown;
}

/** Two failures of the same kind in a row, nothing in between succeeded: the service, not an item, is failing. */
const OUTAGE_AFTER = 3;

/**
 * Whether a batch failing with `err` may be refused for one of its items (then it is split): a 500 (uncertain or
 * not), a 400, a 404 naming a key. Anything else (network, timeouts, 429/503 after the retries, 401, 403) concerns
 * the whole request: thrown to the caller.
 */
export function splittable(err: unknown): boolean {
  return err instanceof ValidationError || err instanceof NotFoundError;
}

/** A refusal that needs no second try: the service said so for certain (a 400, a 404 of the item's key). */
function certain(err: unknown): boolean {
  return err instanceof NotFoundError || (err instanceof ValidationError && !err.uncertain);
}

export interface SplitOptions {
  /**
   * Whether the service answered another request since `since` (ms): a single item that fails twice while the
   * service answers others is refused, not caught in an outage. Default: never (only the split's own successes count).
   */
  answeredSince?: (since: number) => boolean;
  now?: () => number;
}

/**
 * Sends `items` with `send`; when the batch is refused (see `splittable`), sends halves until each refused item is
 * alone. An item alone that fails uncertainly is tried once more after the others: refused when it fails again while
 * something else succeeded, else kept as unsent. When the first failures (the batch, then both halves) succeed
 * nowhere, the split stops: an outage, every item unsent. Errors that are not splittable are thrown as they are.
 *
 * One loop over the parts still to send, not a recursive walk around a function that sends: every request of the
 * split is sent from here, one frame between the caller and `send` (bench/frames.mjs counts the way to the socket).
 */
export async function splitBatch<T>(
  items: readonly T[],
  send: (part: T[]) => Promise<void>,
  o: SplitOptions = {},
): Promise<SplitOutcome<T>> {
  const now = o.now ?? systemNow;
  const out: SplitOutcome<T> = { sent: [], refused: [], unsent: [] };
  // A stack, the next part last: halves go first half first, depth first, the order of a recursive walk.
  const parts: T[][] = items.length > 0 ? [[...items]] : [];
  // Items that failed alone, uncertainly: each sent once more when no part is left (the others went through, or not).
  const suspects: Array<{ item: T; at: number }> = [];
  let succeeded = false;
  let failedInRow = 0;
  let outage = false;

  for (;;) {
    const part = parts.pop();
    const suspect = part ? undefined : suspects.shift();
    const sending = part ?? (suspect ? [suspect.item] : undefined);
    if (!sending) break;
    if (outage) {
      out.unsent.push(...sending);
      continue;
    }
    let err: unknown;
    try {
      await send(sending);
    } catch (e) {
      if (!splittable(e)) throw e;
      err = e;
    }
    if (err === undefined) {
      succeeded = true;
      failedInRow = 0;
      out.sent.push(...sending);
      continue;
    }
    // Only answers that may be faults make an outage: certain refusals (a 404 per bad key) are found one by one.
    if (!certain(err)) failedInRow += 1;
    out.error = err;
    if (suspect) {
      // Its second try failed too: refused when the service took something else meanwhile, else kept for later.
      if (certain(err) || succeeded || o.answeredSince?.(suspect.at))
        out.refused.push({ item: suspect.item, error: err });
      else out.unsent.push(suspect.item);
    } else if (!succeeded && failedInRow >= OUTAGE_AFTER) {
      outage = true;
      out.unsent.push(...sending);
    } else if (sending.length === 1) {
      const item = sending[0] as T;
      if (certain(err)) out.refused.push({ item, error: err });
      else suspects.push({ item, at: now() });
    } else {
      const half = Math.ceil(sending.length / 2);
      parts.push(sending.slice(half), sending.slice(0, half));
    }
  }
  if (out.unsent.length === 0) delete out.error;
  return out;
}

/** The service's answer to a refused item, short and redacted (the client redacts its messages). */
export function answerOf(err: unknown): string {
  const said = err instanceof ValidationError && err.serverMessage ? err.serverMessage : undefined;
  const text = said ?? (err instanceof CasebridgeError ? err.message : String(err));
  const status = err instanceof CasebridgeError && err.status ? `HTTP ${err.status}: ` : '';
  const flat = text.replace(/\s+/g, ' ').trim();
  return `${said ? status : ''}${flat.length > 160 ? `${flat.slice(0, 160)}…` : flat}`;
}
