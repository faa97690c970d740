import { type TestManagementClient, TM_GROUPS } from './tm.js';

/** One operation of a client, as a function of its arguments: `tm.runs.update`. */
export type Operation = (...args: any[]) => Promise<any>;

/** The groups of the test-management client's operations: the contract's groups, and the Jira calls under `jira`. */
const GROUPS = [...Object.keys(TM_GROUPS), 'jira'];

/**
 * The client with every operation replaced by `wrap(fn, group, name)` of its own operation `fn`, as an interceptor
 * wraps a dispatcher: built once per client, not per call. Everything that is not an operation (`close()`,
 * `transport`, `call`) is the client's own (it is the result's prototype). A group's members are all functions
 * (bindGroup); anything else in a group is left out.
 */
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
 * A rule applied to every call of an operation (the run's health counting, a cycle reopened), given as what it does
 * with the call's outcome rather than as a function that calls the next one. The rules stacked on a client run in
 * one function per operation (see withRules), so a rule adds no frame between a caller and the socket: a result's
 * way to the socket is measured by bench/frames.mjs.
 */
export interface CallRule {
  /** The call answered (or a rule under this one answered in place of its error). */
  answered?(): void;
  /**
   * The call failed; a rule under this one that recovered hides the failure from it, as a wrapper's `catch` hides it
   * from the wrappers around it. `again`: how often this rule had this call sent again so far.
   */
  failed?(err: unknown, again: number): Recovery | Promise<Recovery>;
}

/** The client a rule was applied to and the rules of each operation, innermost first, by the client withRules made. */
const stacked = new WeakMap<
  TestManagementClient,
  { under: TestManagementClient; rules: (group: string, name: string) => CallRule[] }
>();

/**
 * The client with `ruleFor(group, name)` applied to every call of each operation. Applied to a client that
 * withRules made, the new rule goes around that client's rules (it sees what they let through, and its `again`
 * sends the call through them again), exactly as a wrapper around that client would; but all of them run in one
 * function over the client under the first rule: two rules are one frame, not two.
 */
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

/** One call of `fn` with `rules` applied, innermost first; one function however many rules there are. */
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
          // Sent again through the rules under this one, which count afresh: a new call of their wrapper.
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
