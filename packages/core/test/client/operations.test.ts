import { describe, expect, it } from 'vitest';
import { JIRA } from '../../src/client/jira.js';
import { type CallRule, mapOperations, type Operation, withRules } from '../../src/client/operations.js';
import { TestManagementClient, TM_GROUPS } from '../../src/client/tm.js';

const real = () => new TestManagementClient({ baseUrl: 'http://127.0.0.1:9', auth: { type: 'bearer', token: 't' } });

/** A client whose operations answer from a script: a value is answered, an Error thrown; every call is logged. */
function scripted(script: Record<string, unknown[]>, log: string[]): TestManagementClient {
  const group = (g: string, names: string[]) =>
    Object.fromEntries(
      names.map((n) => [
        n,
        async (input: unknown) => {
          log.push(`${g}.${n} ${JSON.stringify(input)}`);
          const next = script[`${g}.${n}`]?.shift();
          if (next instanceof Error) throw next;
          return next;
        },
      ]),
    );
  return { runs: group('runs', ['get', 'update']), jira: group('jira', ['myself']) } as unknown as TestManagementClient;
}

describe('mapOperations', () => {
  it('wraps every operation of every group once, with its group and name; the rest is the client', async () => {
    const tm = real();
    const seen: string[] = [];
    const wrapped = mapOperations(tm, (fn, group, name) => {
      seen.push(`${group}.${name}`);
      return async (...args) => [
        group,
        name,
        fn === (tm as unknown as Record<string, Record<string, Operation>>)[group]?.[name],
        args,
      ];
    });
    const all = [
      ...Object.entries(TM_GROUPS).flatMap(([g, ops]) => Object.keys(ops).map((n) => `${g}.${n}`)),
      ...Object.keys(JIRA).map((n) => `jira.${n}`),
    ];
    expect(seen.sort()).toEqual(all.sort());
    expect(await wrapped.runs.get({ runID: 1 })).toEqual(['runs', 'get', true, [{ runID: 1 }]]);
    expect(await wrapped.jira.myself({})).toEqual(['jira', 'myself', true, [{}]]);
    // Built once: the same function at every access; everything else reaches the client itself.
    expect(wrapped.runs.get).toBe(wrapped.runs.get);
    expect(Object.getPrototypeOf(wrapped)).toBe(tm);
    expect(wrapped.transport).toBe(tm.transport);
    expect(Object.keys(wrapped).sort()).toEqual([...Object.keys(TM_GROUPS), 'jira'].sort());
    await wrapped.close();
  });

  it('leaves out what is not a function, and a group the client lacks is empty', () => {
    const tm = { runs: { get: async () => 1, note: 'not an operation' } } as unknown as TestManagementClient;
    const wrapped = mapOperations(tm, (fn) => fn) as unknown as Record<string, Record<string, unknown>>;
    expect(Object.keys(wrapped.runs ?? {})).toEqual(['get']);
    expect(wrapped.plans).toEqual({});
  });
});

describe('withRules', () => {
  it('tells a rule each outcome: an answer, or an error that goes through to the caller', async () => {
    const log: string[] = [];
    const refused = new Error('refused');
    const tm = scripted({ 'runs.get': ['a', refused] }, log);
    const outcomes: string[] = [];
    const rule: CallRule = {
      answered: () => void outcomes.push('answered'),
      failed: (err) => void outcomes.push(`failed ${(err as Error).message}`),
    };
    const ruled = withRules(tm, () => rule);
    expect(await ruled.runs.get({ runID: 1 })).toBe('a');
    await expect(ruled.runs.get({ runID: 2 })).rejects.toBe(refused);
    expect(outcomes).toEqual(['answered', 'failed refused']);
    expect(log).toEqual(['runs.get {"runID":1}', 'runs.get {"runID":2}']);
  });

  it('answers in place of an error, or sends the call again, as a rule says', async () => {
    const log: string[] = [];
    const tm = scripted({ 'runs.get': [new Error('gone')], 'runs.update': [new Error('closed'), 'sent'] }, log);
    const tries: number[] = [];
    const ruled = withRules(tm, (_, name) => ({
      failed: (_err, again) => {
        tries.push(again);
        if (name === 'get') return { answer: undefined };
        return again === 0 ? 'again' : undefined;
      },
    }));
    expect(await ruled.runs.get({ runID: 1 })).toBeUndefined();
    expect(await ruled.runs.update({ runId: 3 })).toBe('sent');
    expect(tries).toEqual([0, 0]);
    expect(log).toEqual(['runs.get {"runID":1}', 'runs.update {"runId":3}', 'runs.update {"runId":3}']);
  });

  it('stacks a rule around the rules of a client it made, in one function over the client under them', async () => {
    const log: string[] = [];
    const tm = scripted(
      { 'runs.update': [new Error('closed'), new Error('closed'), new Error('closed'), 'sent'] },
      log,
    );
    const seen: string[] = [];
    // The inner rule sends a call again once; the outer one too: as two wrappers would, the inner one starts
    // afresh when the outer one sends again (4 sends), and the outer one sees only what the inner lets through.
    const inner = withRules(tm, () => ({
      answered: () => void seen.push('inner answered'),
      failed: (_err, again) => {
        seen.push(`inner failed ${again}`);
        return again === 0 ? 'again' : undefined;
      },
    }));
    const outer = withRules(inner, () => ({
      answered: () => void seen.push('outer answered'),
      failed: (_err, again) => {
        seen.push(`outer failed ${again}`);
        return again === 0 ? 'again' : undefined;
      },
    }));
    expect(await outer.runs.update({ runId: 1 })).toBe('sent');
    expect(seen).toEqual([
      'inner failed 0',
      'inner failed 1',
      'outer failed 0',
      'inner failed 0',
      'inner answered',
      'outer answered',
    ]);
    expect(log).toHaveLength(4);
    // One layer over the client: the stacked client's prototype is the client itself, not the inner client.
    expect(Object.getPrototypeOf(outer)).toBe(tm);
    expect(Object.getPrototypeOf(inner)).toBe(tm);
  });

  it('gives an outer rule the answer an inner rule put in place of an error', async () => {
    const tm = scripted({ 'runs.get': [new Error('missing')] }, []);
    const seen: string[] = [];
    const inner = withRules(tm, () => ({ failed: () => ({ answer: 'stand-in' }) }));
    const outer = withRules(inner, () => ({
      answered: () => void seen.push('outer answered'),
      failed: () => void seen.push('outer failed'),
    }));
    expect(await outer.runs.get({ runID: 1 })).toBe('stand-in');
    expect(seen).toEqual(['outer answered']);
  });

  it('lets through an error a rule itself raises while recovering', async () => {
    const tm = scripted({ 'runs.get': [new Error('closed')] }, []);
    const broken = new Error('the reopen failed');
    const ruled = withRules(tm, () => ({
      failed: async () => {
        throw broken;
      },
    }));
    await expect(ruled.runs.get({ runID: 1 })).rejects.toBe(broken);
  });
});
