import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContentRepositoryClient, TestManagementClient, withDryRun } from '../../src/index.js';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu?.close();
});

describe('withDryRun', () => {
  it('records each call with its input, answers a stand-in, and sends nothing', async () => {
    emu.clearRequests();
    const tm = new TestManagementClient({ baseUrl: emu.url, auth: { type: 'bearer', token: 'casebridge-dev-token' } });
    const repo = new ContentRepositoryClient({
      baseUrl: emu.url,
      auth: { type: 'basic', username: 'a', password: 'b' },
    });
    const lines: string[] = [];
    const dry = withDryRun({ tm, repo }, (line) => lines.push(line));
    expect(await dry.tm.plans.cycles({ testPlanIssueKey: 'DEMO-1' })).toEqual([]);
    await dry.tm.runs.update({ runId: 7, result: 'Failed' });
    expect(await dry.tm.runs.adhocCreate({ testCaseIssueKey: 'DEMO-2' })).toEqual({ id: 1 });
    expect(await dry.tm.runs.adhocCreate({ testCaseIssueKey: 'DEMO-3' })).toEqual({ id: 2 });
    await dry.tm.attachments.addToRunStep({
      runId: 7,
      stepno: 2,
      file: { data: Buffer.from('abc'), fileName: 'a.txt' },
    });
    await dry.tm.attachments.addToRun({
      runId: 7,
      file: [
        { data: Buffer.from('png'), fileName: 'shot.png' },
        { data: '# Page', fileName: 'error-context.md' },
      ],
    });
    const node = await dry.repo?.storeFile({ data: Buffer.from('abc'), fileName: 'b.txt' }, { name: 'b.txt' });
    expect(node?.downloadUrl).toBe('(dry run) b.txt');
    expect(dry.calls).toEqual([
      'plans.cycles {"testPlanIssueKey":"DEMO-1"}',
      'runs.update {"runId":7,"result":"Failed"}',
      'runs.adhocCreate {"testCaseIssueKey":"DEMO-2"}',
      'runs.adhocCreate {"testCaseIssueKey":"DEMO-3"}',
      'attachments.addToRunStep {"runId":7,"stepno":2,"fileName":"a.txt","bytes":3}',
      'attachments.addToRun {"runId":7,"files":[{"fileName":"shot.png","bytes":3},{"fileName":"error-context.md","bytes":6}]}',
      'repository.storeFile {"path":"(in memory)","name":"b.txt"}',
    ]);
    expect(lines).toEqual(dry.calls.map((c) => `dry run: ${c}`));
    // An operation a reporting run does not make has no stand-in: refused, never sent.
    await expect(dry.tm.jira.myself({})).rejects.toThrow(/not simulated/);
    expect(dry.calls).toHaveLength(7);
    expect(emu.requests().filter((r) => !r.path.startsWith('/__emulator'))).toEqual([]);
    await dry.tm.close();
  });
});
