import { z } from 'zod';

/**
 * Faults on purpose: latency, error answers, connection resets, hangs and malformed bodies, scoped by route,
 * deterministic for a given seed. Rules are checked in order; every matching rule applies its latency, and the
 * first matching rule whose dice say so decides the failure.
 */

export const faultRuleSchema = z.strictObject({
  /** Glob on the request path (`*` any characters but `/`, `**` anything), e.g. `/rest/**\/testRun/**`. */
  route: z.string().default('**'),
  /** Only these methods (default all). */
  methods: z.array(z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])).optional(),
  /** Fixed added latency, ms. */
  latencyMs: z.number().int().min(0).max(600_000).default(0),
  /** Uniform random extra latency in [0, jitterMs), ms. */
  jitterMs: z.number().int().min(0).max(600_000).default(0),
  /**
   * Probability per status code, e.g. {"503": 0.3, "429": 0.1}. Answered before the handler runs, or after it
   * committed with `phase: 'after'` (the write happened, the client hears a failure).
   */
  errors: z.partialRecord(z.enum(['429', '500', '502', '503', '504']), z.number().min(0).max(1)).default({}),
  /**
   * Body of an error answer: `text` (plain text), `json` (the service's own error shape, as an internal error that
   * is not a validation error) or `html` (a servlet container's error page).
   */
  body: z.enum(['text', 'json', 'html']).default('text'),
  /** The message in an error body; default `Injected fault: <status>`. */
  message: z.string().min(1).max(2000).optional(),
  /** Retry-After seconds sent with 429 and 503: 0 (which still asks for a pause) up to a day. */
  retryAfterSeconds: z.number().int().min(0).max(86_400).default(1),
  /** Probability of destroying the connection without an answer. */
  resetRate: z.number().min(0).max(1).default(0),
  /** Probability of holding the answer for `hangMs` (past a client's timeout). */
  hangRate: z.number().min(0).max(1).default(0),
  hangMs: z.number().int().min(0).max(600_000).default(30_000),
  /** Probability of replacing a successful body with a malformed one. */
  malformedRate: z.number().min(0).max(1).default(0),
  /** What a malformed body looks like. */
  malformedKind: z.enum(['html', 'truncated', 'empty', 'wrong-types']).default('truncated'),
  /**
   * `before`: the error, reset or hang happens before the request is processed (nothing changed);
   * `after`: the request is processed and committed, then the answer is an error, lost or late (an ambiguous
   * failure: the write happened).
   */
  phase: z.enum(['before', 'after']).default('before'),
  /** Apply to at most this many matching requests, then stop (default unlimited). */
  times: z.number().int().min(1).optional(),
});

export type FaultRuleInput = z.input<typeof faultRuleSchema>;
export type FaultRule = z.output<typeof faultRuleSchema>;

export type FaultDecision =
  | { kind: 'none' }
  | {
      kind: 'error';
      status: number;
      retryAfterSeconds: number;
      phase: 'before' | 'after';
      body: FaultRule['body'];
      message: string;
    }
  | { kind: 'reset'; phase: 'before' | 'after' }
  | { kind: 'hang'; phase: 'before' | 'after'; ms: number }
  | { kind: 'malformed'; malformedKind: FaultRule['malformedKind'] };

export interface FaultPlan {
  delayMs: number;
  decision: FaultDecision;
}

/** mulberry32: small, fast, good enough for dice, and deterministic. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        re += '.*';
        i++;
      } else re += '[^/]*';
    } else re += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

interface ActiveRule {
  rule: FaultRule;
  re: RegExp;
  used: number;
}

export class FaultController {
  private rules: ActiveRule[] = [];
  private random: () => number;

  constructor(
    rules: readonly FaultRuleInput[] = [],
    private seed = 1,
  ) {
    this.random = rng(seed);
    this.set(rules);
  }

  /** Replaces all rules (validated: a bad rule throws a ZodError naming the field) and restarts the dice. */
  set(rules: readonly FaultRuleInput[], seed = this.seed): FaultRule[] {
    const parsed = z.array(faultRuleSchema).parse(rules);
    this.seed = seed;
    this.random = rng(seed);
    this.rules = parsed.map((rule) => ({ rule, re: globToRegExp(rule.route), used: 0 }));
    return parsed;
  }

  add(rule: FaultRuleInput): FaultRule {
    const parsed = faultRuleSchema.parse(rule);
    this.rules.push({ rule: parsed, re: globToRegExp(parsed.route), used: 0 });
    return parsed;
  }

  list(): { rules: FaultRule[]; seed: number; used: number[] } {
    return { rules: this.rules.map((r) => r.rule), seed: this.seed, used: this.rules.map((r) => r.used) };
  }

  clear(): void {
    this.rules = [];
  }

  get active(): boolean {
    return this.rules.length > 0;
  }

  /** Decides what happens to one request. */
  plan(method: string, path: string): FaultPlan {
    let delayMs = 0;
    let decision: FaultDecision = { kind: 'none' };
    for (const r of this.rules) {
      const { rule } = r;
      if (rule.methods && !rule.methods.includes(method as never)) continue;
      if (!r.re.test(path)) continue;
      if (rule.times !== undefined && r.used >= rule.times) continue;
      let applied = false;
      if (rule.latencyMs || rule.jitterMs) {
        delayMs += rule.latencyMs + Math.floor(this.random() * rule.jitterMs);
        applied = true;
      }
      if (decision.kind === 'none') {
        decision = this.roll(rule);
        if (decision.kind !== 'none') applied = true;
      }
      if (applied) r.used += 1;
    }
    return { delayMs, decision };
  }

  private roll(rule: FaultRule): FaultDecision {
    for (const [status, p] of Object.entries(rule.errors)) {
      if (p > 0 && this.random() < p) {
        return {
          kind: 'error',
          status: Number(status),
          retryAfterSeconds: rule.retryAfterSeconds,
          phase: rule.phase,
          body: rule.body,
          message: rule.message ?? `Injected fault: ${status}`,
        };
      }
    }
    if (rule.resetRate > 0 && this.random() < rule.resetRate) return { kind: 'reset', phase: rule.phase };
    if (rule.hangRate > 0 && this.random() < rule.hangRate) return { kind: 'hang', phase: rule.phase, ms: rule.hangMs };
    if (rule.malformedRate > 0 && this.random() < rule.malformedRate) {
      return { kind: 'malformed', malformedKind: rule.malformedKind };
    }
    return { kind: 'none' };
  }
}

/** A malformed body of the given kind, standing in for `body` (the JSON text a handler produced). */
export function malformedBody(kind: FaultRule['malformedKind'], body: string): { type: string; text: string } {
  switch (kind) {
    case 'html':
      return {
        type: 'text/html;charset=UTF-8',
        text: '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1><p>The proxy server received an invalid response from an upstream server.</p></body></html>',
      };
    case 'empty':
      return { type: 'application/json', text: '' };
    case 'wrong-types':
      return { type: 'application/json', text: JSON.stringify(scramble(safeParse(body))) };
    default:
      return { type: 'application/json', text: body.slice(0, Math.max(1, Math.floor(body.length / 2))) };
  }
}

const REASONS: Record<number, string> = {
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** A servlet container's (Tomcat's) error page, as a Jira node or a proxy in front of it answers an unknown error. */
export function servletErrorPage(status: number, message: string): string {
  const title = `HTTP Status ${status} – ${REASONS[status] ?? 'Error'}`;
  const esc = message.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return `<!doctype html><html lang="en"><head><title>${title}</title></head><body><h1>${title}</h1><hr class="line" /><p><b>Type</b> Exception Report</p><p><b>Message</b> ${esc}</p><p><b>Description</b> The server encountered an unexpected condition that prevented it from fulfilling the request.</p><hr class="line" /><h3>Apache Tomcat/9.0.82</h3></body></html>`;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Swaps every leaf's type: numbers become strings, strings become numbers, booleans become strings. */
function scramble(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(scramble);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scramble(x)]));
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return v.length;
  if (typeof v === 'boolean') return String(v);
  return v ?? 'null';
}
