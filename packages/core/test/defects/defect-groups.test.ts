import { describe, expect, it } from 'vitest';
import type { TestManagementClient } from '../../src/client/tm.js';
import { DefectCap } from '../../src/engine/defects/cap.js';
import { fingerprintOf } from '../../src/engine/defects/fingerprint.js';
import { environmentKind, errorType, groupOf, hostlessMessage, projectFrame } from '../../src/engine/defects/groups.js';
import type { TestResult } from '../../src/engine/kernel/model.js';
import type { RunSummary } from '../../src/engine/kernel/types.js';
import { formatSummary, markdownSummary } from '../../src/engine/report/summary.js';

const failing = (title: string, message: string, stack?: string, file = 'tests/db.test.js'): TestResult => ({
  id: `${file} > ${title}`,
  file,
  titlePath: [title],
  tags: [],
  annotations: [],
  attempts: [{ retry: 0, status: 'failed', durationMs: 1, errors: [{ message, stack }], steps: [], attachments: [] }],
});

const frames = (root: string, ...lines: string[]) => lines.map((l) => `    at ${l.replace('<root>', root)}`).join('\n');

describe('environment errors', () => {
  it('are recognised by code and wording, on the first lines only', () => {
    expect(environmentKind('Error: connect ECONNREFUSED 127.0.0.1:5432')).toBe('connection refused');
    expect(environmentKind('Error: socket hang up')).toBe('connection reset');
    expect(environmentKind('Error: read ECONNRESET')).toBe('connection reset');
    expect(environmentKind('Error: getaddrinfo ENOTFOUND db.internal')).toBe('DNS');
    expect(environmentKind('Error: getaddrinfo EAI_AGAIN db.internal')).toBe('DNS');
    expect(environmentKind('Error: self signed certificate in certificate chain')).toBe('TLS');
    expect(environmentKind('Error: unable to verify the first certificate (UNABLE_TO_VERIFY_LEAF_SIGNATURE)')).toBe(
      'TLS',
    );
    expect(environmentKind('thrown: "Exceeded timeout of 5000 ms for a hook.\nAdd a timeout value')).toBe(
      'hook timeout',
    );
    expect(environmentKind('Error: Hook timed out in 10000ms.')).toBe('hook timeout');
    expect(environmentKind('"beforeAll" hook timeout of 30000ms exceeded.')).toBe('hook timeout');
    // A test's own timeout is not the environment; nor is an assertion that prints such a word deep in its diff.
    expect(environmentKind('thrown: "Exceeded timeout of 5000 ms for a test.')).toBeUndefined();
    expect(
      environmentKind('expect(received).toBe(expected)\n\nExpected: "ok"\n\nReceived: "x"\n\n"ECONNREFUSED"'),
    ).toBe(undefined);
    expect(environmentKind('Error: expect(received).toBe(expected)')).toBeUndefined();
  });

  it('lose hosts, addresses and ports', () => {
    const a = hostlessMessage('Error: connect ECONNREFUSED 127.0.0.1:5432');
    expect(a).toBe(hostlessMessage('Error: connect ECONNREFUSED 10.1.2.3:6379'));
    expect(a).toBe(hostlessMessage('Error: connect ECONNREFUSED [::1]:5432'));
    expect(hostlessMessage('Error: getaddrinfo ENOTFOUND db-1.internal')).toBe(
      hostlessMessage('Error: getaddrinfo ENOTFOUND db-2.example.com'),
    );
    expect(a).not.toBe(hostlessMessage('Error: read ECONNRESET'));
  });

  it('group across tests, files and ports: one group for 30 refused connections', () => {
    const hashes = new Set(
      Array.from(
        { length: 30 },
        (_, i) =>
          groupOf(
            failing(
              `query ${i}`,
              `Error: connect ECONNREFUSED 127.0.0.1:${40000 + i}`,
              `Error: connect ECONNREFUSED 127.0.0.1:${40000 + i}\n${frames('/ci/w', `<root>/tests/db${i % 3}.test.js:${i + 3}:5`)}`,
              `tests/db${i % 3}.test.js`,
            ),
          ).hash,
      ),
    );
    expect(hashes.size).toBe(1);
    const g = groupOf(failing('a', 'Error: connect ECONNREFUSED 127.0.0.1:1'));
    expect(g).toMatchObject({ environment: 'connection refused', type: 'ECONNREFUSED', perTest: false });
    expect(g.hash).not.toBe(groupOf(failing('a', 'Error: getaddrinfo ENOTFOUND db')).hash);
  });
});

describe('other errors', () => {
  const assertion = 'Error: expect(received).toBe(expected)\n\nExpected: 200\nReceived: 500';

  it('name their type', () => {
    expect(errorType({ message: 'AssertionError [ERR_ASSERTION]: 1 == 2' })).toBe('AssertionError');
    expect(errorType({ message: 'TypeError: x is not a function' })).toBe('TypeError');
    expect(errorType({ message: 'boom', stack: 'RangeError: boom\n    at x (/a.js:1:1)' })).toBe('RangeError');
    expect(errorType({ message: 'boom' })).toBe('Error');
  });

  it('take the first frame in the project, relative to its root, outside dependencies and the runtime', () => {
    const stack = `Error: x\n${frames(
      '/home/ci/app',
      'expect (/home/ci/app/node_modules/expect/build/index.js:10:5)',
      'processTicksAndRejections (node:internal/process/task_queues:95:5)',
      'expectOk (<root>/tests/support/http.js:7:3)',
      'Object.<anonymous> (<root>/tests/db.test.js:17:9)',
    )}`;
    expect(projectFrame(stack, 'tests/db.test.js')).toBe('tests/support/http.js:7');
    // Another machine, another checkout folder, Windows paths: the same frame.
    expect(
      projectFrame(stack.replaceAll('/home/ci/app', 'C:\\build\\app').replaceAll('/', '\\'), 'tests/db.test.js'),
    ).toBe('tests/support/http.js:7');
    expect(projectFrame('Error: x', 'tests/db.test.js')).toBeUndefined();
  });

  it('group when type, normalised message and source line are equal, whatever the test', () => {
    const at = (line: number, root = '/w') =>
      `${assertion}\n${frames(root, `Object.<anonymous> (<root>/tests/db.test.js:${line}:9)`)}`;
    const a = groupOf(failing('first', assertion, at(17)));
    const b = groupOf(failing('second', assertion.replace('500', '503'), at(17, '/other/checkout')));
    expect(a.perTest).toBe(false);
    expect(a.frame).toBe('tests/db.test.js:17');
    expect(b.hash, 'same place, same message but for numbers: one bug').toBe(a.hash);
    // The same message on another line is not necessarily the same bug.
    expect(groupOf(failing('third', assertion, at(40))).hash).not.toBe(a.hash);
    // Another error type at the same line is another bug.
    expect(groupOf(failing('fourth', assertion.replace('Error', 'TypeError'), at(17))).hash).not.toBe(a.hash);
  });

  it('stay per test without a frame in the project, and with grouping off', () => {
    const t = failing('first', assertion);
    expect(groupOf(t)).toMatchObject({ perTest: true, hash: fingerprintOf(t).hash });
    const refused = failing('x', 'Error: connect ECONNREFUSED 127.0.0.1:1');
    expect(groupOf(refused, false).hash).toBe(fingerprintOf(refused).hash);
    expect(groupOf(refused, false).environment).toBeUndefined();
  });
});

/** A client that answers only `defects.ofCycle`, from a list the test changes. */
function cycleList(list: Array<{ key: string; summary: string }>) {
  let reads = 0;
  const tm = {
    defects: {
      ofCycle: async () => {
        reads += 1;
        return list.map((d, i) => ({ id: i + 1, ...d }));
      },
    },
  } as unknown as TestManagementClient;
  return { tm, reads: () => reads };
}

const CYCLE = { id: 7, name: 'CI', plan: 'DEMO-1', status: 'Active' };
const signal = new AbortController().signal;

describe('the cap (DefectCap)', () => {
  it('hands out at most max slots, also to concurrent callers, and gives back a failed one', async () => {
    const cap = new DefectCap(2, cycleList([]).tm, signal);
    const got = await Promise.all([cap.reserve(undefined), cap.reserve(undefined), cap.reserve(undefined)]);
    expect(got).toEqual([true, true, false]);
    cap.settle(undefined); // the create failed: the slot is free again
    cap.settle('DEMO-9');
    expect(await cap.reserve(undefined)).toBe(true);
    expect(await cap.reserve(undefined)).toBe(false);
    expect(await new DefectCap(0, cycleList([]).tm, signal).reserve(undefined)).toBe(false);
  });

  it('near the cap, waits for its own creates: a defect in the list before its create answered counts once', async () => {
    const list: Array<{ key: string; summary: string }> = [];
    const cap = new DefectCap(2, cycleList(list).tm, signal);
    expect(await cap.reserve(CYCLE)).toBe(true);
    // The create reached the service (the list shows it) but its answer has not arrived yet.
    list.push({ key: 'DEMO-30', summary: 'a [cb-3333333333333333]' });
    let second: boolean | undefined;
    const waiting = cap.reserve(CYCLE).then((ok) => {
      // Without a group there is no ranking: a slot or none.
      second = ok === true;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(second, 'waits while a create is under way').toBeUndefined();
    cap.settle('DEMO-30');
    await waiting;
    expect(second, 'DEMO-30 counted once: the second slot is free').toBe(true);
    cap.settle('DEMO-31');
    expect(await cap.reserve(CYCLE)).toBe(false);
  });

  it("counts the cycle's casebridge defects (other machines'), not the ones this process linked", async () => {
    const list = [
      { key: 'DEMO-20', summary: 'db: refused [cb-0123456789abcdef]' },
      { key: 'DEMO-21', summary: 'filed by a person' },
      { key: 'DEMO-22', summary: 'x [cb-fedcba9876543210]' },
    ];
    const { tm, reads } = cycleList(list);
    const cap = new DefectCap(3, tm, signal);
    expect(await cap.inCycle(CYCLE, 'cb-0123456789abcdef')).toBe('DEMO-20');
    expect(await cap.inCycle(CYCLE, 'cb-1111111111111111')).toBeUndefined();
    expect(reads()).toBe(1);
    cap.noteLinked('DEMO-22'); // an older defect this process linked: not new in this cycle
    // Near the cap, the list is read again: another machine filed one meanwhile.
    list.push({ key: 'DEMO-23', summary: 'y [cb-2222222222222222]' });
    expect(await cap.reserve(CYCLE)).toBe(true);
    expect(reads()).toBe(2);
    cap.settle('DEMO-24');
    expect(await cap.reserve(CYCLE), 'DEMO-20, DEMO-23 and DEMO-24: the cap of 3').toBe(false);
    cap.noteNotFiled();
    expect(cap.notFiled(true)).toEqual({
      notFiled: 1,
      notFiledReason:
        'the cap of 3 new defects per run (defects.maxPerRun) was reached, counted across the machines reporting into the cycle',
    });
    expect(cap.note()).toContain("not filed: the run's cap of 3 new defects was reached");
  });
});

describe('the summary', () => {
  it('says how many failures were not filed, and why', () => {
    const s: RunSummary = {
      enabled: true,
      mode: 'adhoc',
      dryRun: false,
      byStatus: { failed: 12 },
      results: 12,
      delivered: 12,
      defects: {
        created: [],
        linked: [],
        notFiled: 2,
        notFiledReason: 'the cap of 10 new defects per run (defects.maxPerRun) was reached',
      },
      attachments: { uploaded: 0, skipped: [], stored: [] },
      unmapped: [],
      createdCases: [],
      problems: [],
      journaled: 0,
    };
    const line = '2 failure(s) not filed as defects: the cap of 10 new defects per run (defects.maxPerRun) was reached';
    expect(formatSummary(s)).toContain(`  ${line}`);
    expect(markdownSummary(s)).toContain(line);
    expect(formatSummary({ ...s, defects: { created: [], linked: [] } })).not.toContain('not filed');
  });
});
