import { writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { demoSeed, type RunningEmulator, type SeedInput, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JEST_PACKAGE, jest, jestConfig } from './support/jest.js';
import { fixture, ROOT, run } from './support/runner.js';

/**
 * Defect fields end to end (issue 18, point 2): the real `jest` and the built CLI against the real emulator, whose
 * Bug create screen requires a component and a custom select field. With `defects.fields` set, the defect carries
 * them and its description follows `defects.descriptionTemplate`; without them, the runs still get their status and
 * comment, no defect is filed, one problem line names the fields and the count; `doctor` names the fields with
 * example values, passes once they are set, and warns when the service has no createmeta.
 */

const CLI = join(ROOT, 'packages', 'cli', 'dist', 'cli.js');
const TOKEN = 'casebridge-dev-token';
const KEYS = ['FLD-2', 'FLD-3', 'FLD-4'];

const seed: SeedInput = {
  users: demoSeed.users,
  customFields: [{ id: 'customfield_10010', name: 'Team', type: 'option', options: ['Web', 'Mobile'] }],
  projects: [
    {
      key: 'FLD',
      name: 'Fields',
      components: ['Checkout', 'Search'],
      versions: ['1.0', '1.1'],
      createScreens: {
        Bug: {
          fields: ['labels', 'components', 'priority', 'fixVersions', 'customfield_10010'],
          required: ['components', 'customfield_10010'],
        },
      },
      issues: [
        { type: 'Test Plan', summary: 'Release', members: KEYS },
        ...KEYS.map((k) => ({ type: 'Test Case', summary: `case ${k}` })),
      ],
    },
  ],
};

const FIELDS = {
  labels: ['ci', 'casebridge'],
  components: [{ name: 'Checkout' }],
  priority: { name: 'High' },
  fixVersions: [{ name: '1.1' }],
  customfield_10010: { value: 'Web' },
};

/** Three distinct failures (three groups), each on its own line. */
const TESTS = KEYS.map(
  (k, i) => `test('${k} checks value ${i}', () => {\n  expect({ v${i}: 'wrong' }).toEqual({ v${i}: 'right' });\n});`,
).join('\n');

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, seed });
});
afterAll(async () => {
  await emu?.close();
});

const env = (cycle: string) => ({
  CASEBRIDGE_URL: emu.url,
  CASEBRIDGE_TOKEN: TOKEN,
  CASEBRIDGE_PROJECT: 'FLD',
  CASEBRIDGE_MODE: 'cycle',
  CASEBRIDGE_TEST_PLAN: 'FLD-1',
  CASEBRIDGE_CYCLE: cycle,
  BUILD_URL: 'https://ci.example.test/job/42',
});

const project = (name: string, defects: Record<string, unknown>) =>
  fixture(name, {
    'package.json': JEST_PACKAGE,
    'jest.config.js': jestConfig({ defects }),
    'tests/values.test.js': TESTS,
  });

async function issue(key: string): Promise<{ fields: Record<string, unknown> }> {
  const res = await fetch(`${emu.url}/rest/api/2/issue/${key}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as { fields: Record<string, unknown> };
}

function runsOf(cycleName: string) {
  const s = emu.store;
  const cycle = s.cycles.find((c) => c.name === cycleName);
  if (!cycle) throw new Error(`no cycle "${cycleName}"`);
  return new Map(
    s.runs
      .filter((r) => r.cycleId === cycle.id)
      .map((r) => [
        s.issues.get(r.tcId)?.key ?? '?',
        { status: r.status, comment: r.comment ?? '', bugs: s.bugLinks.filter((b) => b.runId === r.id).length },
      ]),
  );
}

const bugs = () => emu.store.issues.filter((i) => i.type === 'Bug');
const createBugCalls = () => emu.requests().filter((r) => r.path.endsWith('/testRun/createRunBug'));

describe('defects.fields and templates (Jest, cycle mode)', () => {
  it('(a) with the required fields set, each defect carries them and follows descriptionTemplate', async () => {
    await emu.reset();
    const dir = project('jest-defect-fields-ok', {
      fields: FIELDS,
      summaryTemplate: '[${runner}] ${title}',
      descriptionTemplate: '${test} failed at ${location}\nBuild: ${ciUrl}\n${error}',
    });
    const out = await jest(dir, ['tests/'], env('fields ok'));
    expect(out.code, out.stderr).toBe(1);
    expect(bugs()).toHaveLength(3);
    const first = bugs().find((b) => b.summary.startsWith('[jest] FLD-2 checks value 0'));
    expect(first?.summary).toMatch(/^\[jest\] FLD-2 checks value 0 \[cb-[0-9a-f]{16}\]$/);
    const got = await issue(first?.key ?? '?');
    expect(got.fields.labels).toEqual(['ci', 'casebridge']);
    expect((got.fields.components as Array<{ name: string }>).map((c) => c.name)).toEqual(['Checkout']);
    expect((got.fields.priority as { name: string }).name).toBe('High');
    expect((got.fields.fixVersions as Array<{ name: string }>).map((v) => v.name)).toEqual(['1.1']);
    expect((got.fields.customfield_10010 as { value: string }).value).toBe('Web');
    expect(got.fields.description).toBe(
      'tests/values.test.js > FLD-2 checks value 0 failed at tests/values.test.js:2\nBuild: https://ci.example.test/job/42\nError: expect(received).toEqual(expected) // deep equality',
    );
    const runs = runsOf('fields ok');
    for (const k of KEYS) expect(runs.get(k), k).toMatchObject({ status: 'Failed', bugs: 1 });
    expect(out.stderr).toContain('defects created: 3');
  });

  it('(b) without them: runs Failed with comments, no defect, ONE problem line with the fields and the count', async () => {
    await emu.reset();
    const dir = project('jest-defect-fields-missing', { fields: { labels: ['ci'] } });
    const out = await jest(dir, ['tests/'], env('fields missing'));
    expect(out.code, out.stderr).toBe(1);
    expect(bugs(), 'no defect filed').toHaveLength(0);
    // One create tried (then every other would be refused the same way): no retries, none per failure.
    expect(createBugCalls()).toHaveLength(1);
    expect(createBugCalls()[0]?.status).toBe(500);
    const runs = runsOf('fields missing');
    for (const k of KEYS) {
      expect(runs.get(k)?.status, k).toBe('Failed');
      expect(runs.get(k)?.comment, k).toContain(
        'Defect not filed: Jira refused its fields: components: Component/s is required; customfield_10010: Team is required (set defects.fields.components, set defects.fields.customfield_10010, see doctor)',
      );
      expect(runs.get(k)?.bugs, k).toBe(0);
    }
    const lines = out.stderr.split('\n').filter((l) => l.includes('not filed: Jira refused'));
    expect(lines, out.stderr).toHaveLength(1);
    expect(lines[0]).toContain(
      'defects for 3 failures (FLD-2, FLD-3, FLD-4) not filed: Jira refused their fields: components: Component/s is required; customfield_10010: Team is required (set defects.fields.components, set defects.fields.customfield_10010, see doctor)',
    );
    expect(out.stderr).toContain('1 problem(s)');
    expect(out.stderr).not.toMatch(/journal(?:ed)?: [1-9]|kept on disk/);
  });
});

describe('doctor: the create screen of the defect issue type', () => {
  const doctorIn = (name: string, defects: Record<string, unknown>, url = emu.url) => {
    const dir = fixture(name, {});
    writeFileSync(join(dir, 'casebridge.config.json'), JSON.stringify({ defects }));
    return run(process.execPath, [CLI, 'doctor'], dir, {
      CASEBRIDGE_URL: url,
      CASEBRIDGE_TOKEN: TOKEN,
      CASEBRIDGE_PROJECT: 'FLD',
    });
  };

  it('(c) fails naming components and customfield_10010 with example values; passes once they are set', async () => {
    await emu.reset();
    const out = await doctorIn('doctor-fields-missing', { fields: { labels: ['ci'] } });
    expect(out.code, out.stdout).toBe(1);
    expect(out.stdout).toMatch(
      /^✗ defect fields +the Bug create screen of FLD: Component\/s \(components\) is required; Team \(customfield_10010\) is required/m,
    );
    expect(out.stdout).toContain(
      'fix: set defects.fields.components, e.g. [{"name":"Checkout"}]; set defects.fields.customfield_10010, e.g. {"value":"Web"}',
    );

    const bad = await doctorIn('doctor-fields-bad', { fields: { ...FIELDS, components: [{ name: 'Billing' }] } });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(
      'Component/s (components): {"name":"Billing"} is not allowed (allowed: Checkout, Search)',
    );

    const ok = await doctorIn('doctor-fields-ok', { fields: FIELDS });
    expect(ok.stdout).toMatch(/^✓ defect fields +the Bug create screen of FLD takes labels, components/m);
    expect(ok.code, ok.stdout).toBe(0);
  });

  it('(c) warns, without failing, when the service answers 404 to createmeta', async () => {
    // A proxy in front of the emulator that hides every createmeta resource, as a Jira without them would.
    const target = new URL(emu.url);
    const proxy: Server = createServer((req, res) => {
      if ((req.url ?? '').includes('/rest/api/2/issue/createmeta')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"errorMessages":["null for uri"],"errors":{}}');
        return;
      }
      const fwd = request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      req.pipe(fwd);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const out = await doctorIn('doctor-fields-nometa', { fields: { labels: ['ci'] } }, url);
      expect(out.stdout).toMatch(
        /^! defect fields +not checked: the service does not describe the Bug create screen of FLD \(createmeta answered 404\)/m,
      );
      expect(out.code, out.stdout).toBe(0);
    } finally {
      await new Promise((r) => proxy.close(r));
    }
  });
});
