import { CasebridgeError, NotFoundError, ValidationError } from '../../client/errors.js';
import { now as systemNow } from '../../client/time.js';

/**
 * synapseRT answers 500 to one bad item and to a transient fault alike, so a failing batch is halved until an item
 * fails alone, repeatedly, while others succeed (docs/architecture.md).
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

/** Whether a batch failing with `err` may be refused for one item (400, 404, 500); anything else is thrown. */
export function splittable(err: unknown): boolean {
  return err instanceof ValidationError || err instanceof NotFoundError;
}

/** A refusal that needs no second try: the service said so for certain (a 400, a 404 of the item's key). */
function certain(err: unknown): boolean {
  return err instanceof NotFoundError || (err instanceof ValidationError && !err.uncertain);
}

export interface SplitOptions {
  /**
   * Whether the service answered another request since `since` (ms); default never (only the split's successes count).
   */
  answeredSince?: (since: number) => boolean;
  now?: () => number;
}

/**
 * Sends `items`, halving a refused batch until each refused item is alone; batch and halves failing with nothing
 * succeeding is an outage (all unsent). A loop, not recursion: one frame between caller and `send`.
 */
export async function splitBatch<T>(
  items: readonly T[],
  send: (part: T[]) => Promise<void>,
  o: SplitOptions = {},
): Promise<SplitOutcome<T>> {
  const now = o.now ?? systemNow;
  const out: SplitOutcome<T> = { sent: [], refused: [], unsent: [] };
  // A stack, the next part last: depth first, the order of a recursive walk.
  const parts: T[][] = items.length > 0 ? [[...items]] : [];
  // Items that failed alone, uncertainly: each sent once more when no part is left.
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
