import { type TestManagementClient, TM_GROUPS } from './tm.js';

/** One operation of a client, as a function of its arguments: `tm.runs.update`. */
export type Operation = (...args: any[]) => Promise<any>;

/** The groups of the test-management client's operations: the contract's groups, and the Jira calls under `jira`. */
const GROUPS = [...Object.keys(TM_GROUPS), 'jira'];

/** The client with every operation replaced by `wrap(fn, group, name)`; the rest comes from its prototype. */
export function mapOperations(
  tm: TestManagementClient,
  wrap: (fn: Operation, group: string, name: string) => Operation,
): TestManagementClient {
  const wrapped = Object.create(tm) as TestManagementClient;
  const groups = tm as unknown as Record<string, Record<string, unknown> | undefined>;
  for (const group of GROUPS) {
    const out: Record<string, Operation> = {};
    for (const [name, fn] of Object.entries(groups[group] ?? {})) {
      if (typeof fn === 'function') out[name] = wrap(fn as Operation, group, name);
    }
    Object.defineProperty(wrapped, group, { value: out, enumerable: true });
  }
  return wrapped;
}

/** What a rule does with a failed call: lets the error through (`undefined`), answers instead, or sends it again. */
export type Recovery = undefined | { answer: unknown } | 'again';

/**
 * A rule applied to every call of an operation (health counting, a cycle reopened). All rules on a client run in one
 * function per operation, so they add no stack frame (bench/frames.mjs).
 */
export interface CallRule {
  /** The call answered (or a rule under this one answered in place of its error). */
  answered?(): void;
  /** The call failed (unless a rule under this one recovered); `again`: how often this rule has re-sent it so far. */
  failed?(err: unknown, again: number): Recovery | Promise<Recovery>;
}

/** For each client withRules made: the client under the first rule and each operation's rules, innermost first. */
const stacked = new WeakMap<
  TestManagementClient,
  { under: TestManagementClient; rules: (group: string, name: string) => CallRule[] }
>();

/** The client with `ruleFor(group, name)` around its rules, all run in one function over the innermost client. */
export function withRules(
  tm: TestManagementClient,
  ruleFor: (group: string, name: string) => CallRule | undefined,
): TestManagementClient {
  const below = stacked.get(tm);
  const under = below?.under ?? tm;
  const rules = (group: string, name: string): CallRule[] => {
    const inner = below?.rules(group, name) ?? [];
    const rule = ruleFor(group, name);
    return rule ? [...inner, rule] : inner;
  };
  const client = mapOperations(under, (fn, group, name) => applying(fn, rules(group, name)));
  stacked.set(client, { under, rules });
  return client;
}

/** One call of `fn` with `rules` applied, innermost first. */
function applying(fn: Operation, rules: readonly CallRule[]): Operation {
  return async (...args) => {
    const again = rules.map(() => 0);
    send: for (;;) {
      let outcome: { answer: unknown } | { err: unknown };
      try {
        outcome = { answer: await fn(...args) };
      } catch (err) {
        outcome = { err };
      }
      for (const [i, rule] of rules.entries()) {
        if ('answer' in outcome) {
          rule.answered?.();
          continue;
        }
        const recovery = await rule.failed?.(outcome.err, again[i] ?? 0);
        if (recovery === 'again') {
          // Re-sent through the rules under this one, which count afresh, as a new call of their wrapper would.
          again[i] = (again[i] ?? 0) + 1;
          again.fill(0, 0, i);
          continue send;
        }
        if (recovery) outcome = recovery;
      }
      if ('err' in outcome) throw outcome.err;
      return outcome.answer;
    }
  };
}
