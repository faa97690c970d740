import type { ResultError } from '@casebridge/core';

/** Bounds of what one test keeps of its text, in characters: enough for a summary, never a whole log. */
export const LIMITS = { message: 2_000, stack: 16_000, output: 4_096 };

/**
 * A copy of `s` that shares no memory with the text it was cut from. V8 keeps a slice's whole parent alive, and the
 * parser's strings are slices of 64 KiB chunks: without the copy, every result the engine holds would pin its chunk.
 */
export const own = (s: string): string => Buffer.from(s, 'utf8').toString('utf8');

/** Copies of an element's attributes (see `own`). */
export const ownAttrs = (attrs: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(attrs).map(([k, v]) => [k, own(v)]));

/** Keeps the beginning of a streamed text (an error's stack: the first frames matter). */
export class Head {
  private text = '';
  private dropped = 0;
  constructor(private readonly max: number) {}
  push(s: string): void {
    const room = this.max - this.text.length;
    if (room > 0) this.text += s.slice(0, room);
    this.dropped += Math.max(0, s.length - Math.max(0, room));
  }
  value(): string {
    return own(this.dropped ? `${this.text}\n… (${this.dropped} more characters)` : this.text);
  }
}

/** Keeps the end of a streamed text (a test's output: the last lines matter). */
export class Tail {
  private text = '';
  constructor(private readonly max: number) {}
  push(s: string): void {
    this.text = (this.text + s.slice(-this.max)).slice(-this.max);
  }
  value(): string | undefined {
    const t = this.text.trim();
    return t ? own(t) : undefined;
  }
}

const cap = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** The first line that says something (Go's output starts with `=== RUN` and ends with `--- FAIL`). */
export function firstMeaningfulLine(text: string): string | undefined {
  for (const raw of text.split('\n', 50)) {
    const line = raw.trim();
    if (line && !/^(?:=== |--- )/.test(line)) return line;
  }
  return undefined;
}

/**
 * A `<failure>`/`<error>` (or a Surefire rerun element): the message attribute, else the text's first line; the
 * exception type in front when the message does not name it; the element's text as the stack.
 */
export function errorOf(element: string, attrs: Record<string, string>, text: string): ResultError {
  const type = (attrs.type ?? '').trim();
  let message = (attrs.message ?? '').trim();
  // go-junit-report and gotestsum write message="Failed": the output says more.
  if (!message || message === 'Failed') message = firstMeaningfulLine(text) ?? message;
  if (!message) message = type || (/error/i.test(element) ? 'error' : 'failed');
  const shortType = type.split('.').pop() ?? '';
  if (/(?:Error|Exception|Failure)$/.test(shortType) && !message.includes(shortType)) {
    message = `${shortType}: ${message}`;
  }
  const stack = text.trim();
  return { message: cap(message, LIMITS.message), ...(stack ? { stack } : {}) };
}

/** Seconds (`1.5`, `1,234.5`) to whole milliseconds; 0 when absent or not a number. */
export function durationMs(time: string | undefined): number {
  const n = Number((time ?? '').replace(/,/g, ''));
  return Number.isFinite(n) && n > 0 ? Math.round(n * 1000) : 0;
}
