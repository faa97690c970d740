import { describe, expect, it, vi } from 'vitest';
import type { TestManagementClient } from '../../src/client/tm.js';
import { DefectCap } from '../../src/engine/defects/cap.js';
import type { FailureGroup } from '../../src/engine/defects/groups.js';

/**
 * The cap's choice of groups (ad hoc mode: no cycle list, so no request is made and the client is never called):
 * the first half of the slots streams, the rest go by blast radius once every result is in.
 */

const noClient = {} as TestManagementClient;

function group(name: string, environment?: FailureGroup['environment']): FailureGroup {
  return {
    hash: name.padEnd(16, '-').slice(0, 16),
    label: `casebridge-${name}`,
    normalisedMessage: `${name} failed\nat line <n>`,
    type: environment ? 'ECONNREFUSED' : 'AssertionError',
    perTest: false,
    ...(environment ? { environment } : {}),
  };
}

/** Reserves a slot for each group in order, settling each granted one as created (as a create that answered). */
function reserveAll(cap: DefectCap, groups: FailureGroup[]) {
  const outcome = new Map<string, boolean>();
  const done = groups.map((g, i) =>
    ask(cap, g).then((ok) => {
      outcome.set(g.hash, ok);
      if (ok) cap.settle(`BUG-${i + 1}`);
      else cap.noteNotFiled();
    }),
  );
  return { outcome, done: Promise.all(done) };
}

/** A slot as decided: at once, or when the ranking (or a standby) answers `later`. */
const ask = (cap: DefectCap, g: FailureGroup) =>
  cap.reserve(undefined, g).then((slot) => (typeof slot === 'boolean' ? slot : slot.later));

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('the defect cap ranks by blast radius', () => {
  it('30 tests on one refused connection after 12 distinct assertions: the outage gets a defect, 9 others do', async () => {
    const cap = new DefectCap(10, noClient, new AbortController().signal);
    const asserts = Array.from({ length: 12 }, (_, i) => group(`assert${i}`));
    const outage = group('database', 'connection refused');
    // The engine sees every failing test as it comes in: the assertions first, then the 30 tests of the outage.
    for (const g of asserts) cap.saw(g);
    for (let i = 0; i < 30; i++) cap.saw(outage);
    const { outcome, done } = reserveAll(cap, [...asserts, outage]);
    await tick();
    // The first half of the slots went as the failures came; the others wait for the whole run.
    expect([...outcome.values()].filter(Boolean)).toHaveLength(5);
    expect(outcome.has(outage.hash)).toBe(false);
    cap.allIn();
    await done;
    expect(outcome.get(outage.hash)).toBe(true);
    expect([...outcome.values()].filter(Boolean)).toHaveLength(10);
    // The ones left out: the last assertions to arrive (each hit one test), named largest first.
    const summary = cap.notFiled(false);
    expect(summary.notFiled).toBe(3);
    expect(summary.notFiledGroups?.map((g) => g.tests)).toEqual([1, 1, 1]);
    expect(summary.notFiledGroups?.[0]?.label).toBe('AssertionError: assert9 failed');
  });

  it('groups ranked by their failing tests, environment errors first on a tie, then the first seen', async () => {
    const cap = new DefectCap(2, noClient, new AbortController().signal);
    const a = group('a');
    const b = group('b');
    const env = group('dns', 'DNS');
    const c = group('c');
    for (const [g, n] of [
      [a, 1],
      [b, 3],
      [env, 3],
      [c, 2],
    ] as const)
      for (let i = 0; i < n; i++) cap.saw(g);
    // One slot streams (half of 2): `a` asked first and took it.
    const { outcome, done } = reserveAll(cap, [a, b, env, c]);
    await tick();
    expect(outcome.get(a.hash)).toBe(true);
    cap.allIn();
    await done;
    // One slot left: b and the DNS error hit 3 tests each; the environment error wins the tie.
    expect(outcome.get(env.hash)).toBe(true);
    expect(outcome.get(b.hash)).toBe(false);
    expect(outcome.get(c.hash)).toBe(false);
    expect(cap.notFiled(false).notFiledGroups).toEqual([
      { label: 'AssertionError: b failed', tests: 3 },
      { label: 'AssertionError: c failed', tests: 2 },
    ]);
  });

  it('a group whose delivery asks after the ranking gets the slot it was ranked into', async () => {
    const cap = new DefectCap(2, noClient, new AbortController().signal);
    const [a, b, big] = [group('a'), group('b'), group('big')];
    cap.saw(a);
    cap.saw(b);
    for (let i = 0; i < 5; i++) cap.saw(big);
    expect(await ask(cap, a)).toBe(true);
    cap.settle('BUG-1');
    // All results are in before the deliveries of b and big asked.
    cap.allIn();
    // b stands by while big, ranked in, is undecided; big takes its slot, and b is refused then.
    const standingBy = ask(cap, b);
    expect(await ask(cap, big)).toBe(true);
    cap.settle('BUG-2');
    expect(await standingBy).toBe(false);
  });

  it('a ranked group that links an existing defect gives its slot to the next group of the ranking', async () => {
    // Night 2 of a suite whose first failures got defects on night 1: those rank first (seen first) but link.
    const cap = new DefectCap(4, noClient, new AbortController().signal);
    const [a, b, c, d, e, f] = [group('a'), group('b'), group('c'), group('d'), group('e'), group('f')];
    for (const g of [a, b, c, d, e, f]) cap.saw(g);
    for (const [i, g] of [a, b].entries()) {
      expect(await ask(cap, g)).toBe(true);
      cap.settle(`BUG-${i + 1}`);
    }
    cap.allIn();
    // c and d are ranked into the two slots left; f and e ask first and stand by.
    const fAsks = ask(cap, f);
    const eAsks = ask(cap, e);
    cap.noteLinked('OLD-1', c);
    expect(await eAsks).toBe(true);
    cap.settle('BUG-3');
    expect(await ask(cap, d)).toBe(true);
    cap.settle('BUG-4');
    expect(await fAsks).toBe(false);
    expect(cap.notFiled(false)).toEqual({});
  });

  it('a group standing by is refused after a bounded wait when a ranked group never asks', async () => {
    vi.useFakeTimers();
    try {
      const cap = new DefectCap(2, noClient, new AbortController().signal);
      const [a, b, silent] = [group('a'), group('b'), group('silent')];
      for (let i = 0; i < 3; i++) cap.saw(silent);
      cap.saw(a);
      cap.saw(b);
      expect(await ask(cap, a)).toBe(true);
      cap.settle('BUG-1');
      cap.allIn();
      const b1 = ask(cap, b);
      await vi.advanceTimersByTimeAsync(3_000);
      expect(await b1).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a group the ranking did not know (a replayed result) takes only a slot no ranked group still needs', async () => {
    const cap = new DefectCap(3, noClient, new AbortController().signal);
    const [a, b] = [group('a'), group('b')];
    cap.saw(a);
    cap.saw(b);
    expect(await ask(cap, a)).toBe(true);
    cap.settle('BUG-1');
    cap.allIn();
    // b is owed one of the two slots left: the replayed group takes the other.
    expect(await ask(cap, group('replayed'))).toBe(true);
    cap.settle('BUG-2');
    expect(await ask(cap, group('another'))).toBe(false);
    expect(await ask(cap, b)).toBe(true);
  });

  it('beyond the streaming half, reserve answers at once that the ranking decides later', async () => {
    const cap = new DefectCap(4, noClient, new AbortController().signal);
    const [a, b, c] = [group('a'), group('b'), group('c')];
    for (const g of [a, b, c]) cap.saw(g);
    for (const g of [a, b]) {
      expect(await cap.reserve(undefined, g)).toBe(true);
      cap.settle(`BUG-${g.label}`);
    }
    // Nothing waits for the other results: the answer comes now, the decision with the ranking.
    const slot = await cap.reserve(undefined, c);
    expect(typeof slot).toBe('object');
    let decided: boolean | undefined;
    if (typeof slot === 'object') void slot.later.then((ok) => (decided = ok));
    await tick();
    expect(decided).toBeUndefined();
    cap.allIn();
    await tick();
    expect(decided).toBe(true);
  });

  it('under the streaming half nothing waits, and a cap of 0 files nothing', async () => {
    const cap = new DefectCap(10, noClient, new AbortController().signal);
    for (let i = 0; i < 5; i++) {
      expect(await ask(cap, group(`g${i}`))).toBe(true);
      cap.settle(`BUG-${i}`);
    }
    const none = new DefectCap(0, noClient, new AbortController().signal);
    expect(await ask(none, group('x'))).toBe(false);
  });
});
