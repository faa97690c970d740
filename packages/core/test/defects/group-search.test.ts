import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { TestManagementClient } from '../../src/client/tm.js';
import { GroupSearch } from '../../src/engine/defects/search.js';
import { useEmulator } from '../support/emulator.js';

/**
 * The groups' defect searches (defects/search.ts) gather the failures that come in together into one search; once
 * every result is in, nothing is left to gather, so a search a first look waits for goes at once. On a fake clock
 * that never moves: a search still waiting for its gather would never be sent, and the look would never answer.
 */

const emulator = useEmulator({ profile: 'ideal' });
let tm: TestManagementClient;
beforeAll(() => {
  tm = new TestManagementClient({ baseUrl: emulator().url, auth: { type: 'bearer', token: 'casebridge-dev-token' } });
});
afterEach(() => {
  vi.useRealTimers();
});

const searches = () =>
  emulator()
    .requests()
    .filter((r) => r.op === 'jira.search').length;
/** A few turns of the event loop on the real clock's setImmediate (not faked): time for a request to go out. */
const turns = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

/** A search on a clock that moves only when told (setTimeout faked), with the emulator's request log empty. */
function frozen(): GroupSearch {
  emulator().clearRequests();
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  return new GroupSearch(tm, new AbortController().signal);
}

describe('the first looks of failure groups', () => {
  it('gathered while results come in; once all are in, the one a look waits for goes at once, one search for all', async () => {
    const search = frozen();
    search.early('DEMO', 'aaaaaaaaaaaaaaaa');
    search.early('DEMO', 'bbbbbbbbbbbbbbbb');
    const look = search.first('DEMO', 'aaaaaaaaaaaaaaaa');
    await turns();
    expect(searches(), 'gathering: more failures may come').toBe(0);
    search.allIn();
    await expect(look).resolves.toEqual([]);
    expect(searches(), 'both groups in one search').toBe(1);
    // The other group's look takes the answer already given.
    await expect(search.first('DEMO', 'bbbbbbbbbbbbbbbb')).resolves.toEqual([]);
    expect(searches()).toBe(1);
  });

  it('all in before any look: nothing is sent until a look needs it (a failure known from its history never does)', async () => {
    const search = frozen();
    search.early('DEMO', 'cccccccccccccccc');
    search.allIn();
    await turns();
    expect(searches()).toBe(0);
    await expect(search.first('DEMO', 'cccccccccccccccc')).resolves.toEqual([]);
    expect(searches()).toBe(1);
  });

  it('the run ended: a gathered search no look took is never sent', async () => {
    const search = frozen();
    search.early('DEMO', 'dddddddddddddddd');
    search.close();
    vi.advanceTimersByTime(10_000);
    await turns();
    expect(searches()).toBe(0);
  });
});

describe('each ask says how long it may wait', () => {
  it('the read after a create joins the failures early search: one search for both, when the early one is due', async () => {
    const search = frozen();
    search.early('DEMO', 'eeeeeeeeeeeeeeee');
    const read = search.afterIndex('DEMO', 'ffffffffffffffff', 0);
    await turns();
    vi.advanceTimersByTime(1_900);
    await turns();
    expect(searches(), 'neither may wait less than the early ask').toBe(0);
    vi.advanceTimersByTime(100);
    await expect(read).resolves.toEqual([]);
    await expect(search.first('DEMO', 'eeeeeeeeeeeeeeee')).resolves.toEqual([]);
    expect(searches(), 'both groups in one search').toBe(1);
  });

  it('a look a delivery waits on brings a gathering search forward to its own short wait', async () => {
    const search = frozen();
    search.early('DEMO', '1111111111111111');
    const look = search.of('DEMO', '2222222222222222');
    vi.advanceTimersByTime(100);
    await expect(look).resolves.toEqual([]);
    expect(searches()).toBe(1);
    // The early ask went with it: its look takes that answer, no second search.
    await expect(search.first('DEMO', '1111111111111111')).resolves.toEqual([]);
    expect(searches()).toBe(1);
  });

  it('once every result is in, a read after a create waits no longer than a look', async () => {
    const search = frozen();
    const read = search.afterIndex('DEMO', '3333333333333333', 0);
    search.allIn();
    await expect(read).resolves.toEqual([]);
    expect(searches()).toBe(1);
    const late = search.afterIndex('DEMO', '4444444444444444', 0);
    vi.advanceTimersByTime(100);
    await expect(late).resolves.toEqual([]);
    expect(searches()).toBe(2);
  });

  it("at the end, the reads after creates wait for each other's index poll: the last to wake sends one search", async () => {
    const search = frozen();
    search.allIn();
    const first = search.afterIndex('DEMO', '5555555555555555', 1_000);
    const last = search.afterIndex('DEMO', '6666666666666666', 1_200);
    vi.advanceTimersByTime(1_150);
    await turns();
    expect(searches(), 'the first waits past its own short wait for the other, still waiting on the index').toBe(0);
    vi.advanceTimersByTime(50);
    await expect(first).resolves.toEqual([]);
    await expect(last).resolves.toEqual([]);
    expect(searches(), 'both in one search, as the last woke').toBe(1);
  });
});
