import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/engine/config/load.js';
import { expandTemplate } from '../../src/engine/config/schema.js';

const base = { url: 'https://jira.example.com', token: 'pat-123456', projectKey: 'DEMO' };
const noFile = () => mkdtempSync(join(tmpdir(), 'cb-config-'));

describe('configuration', () => {
  it('fills defaults from minimal options', () => {
    const r = loadConfig(base, { env: {}, cwd: noFile() });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.config.mode).toBe('adhoc');
    expect(r.config.defects).toMatchObject({ enabled: true, issueType: 'Bug', onFlaky: false });
    expect(r.config.attachments.screenshots).toBe('on-failure');
    expect(r.config.flushTimeoutMs).toBe(30_000);
    expect(r.config.failOnError).toBe(false);
  });

  it("Jira's index lag and the bulk's wait: one setting each, from options or CASEBRIDGE_*, checked", () => {
    const defaults = loadConfig(base, { env: {}, cwd: noFile() });
    expect(defaults.ok && [defaults.config.jira.indexLagMs, defaults.config.bulkWaitMs]).toEqual([3_000, 30_000]);
    const env = { CASEBRIDGE_JIRA_INDEX_LAG_MS: '1500', CASEBRIDGE_BULK_WAIT_MS: '5000' };
    const set = loadConfig(base, { env, cwd: noFile() });
    expect(set.ok && [set.config.jira.indexLagMs, set.config.bulkWaitMs]).toEqual([1_500, 5_000]);
    const problems = (options: Record<string, unknown>, e: Record<string, string> = {}) => {
      const r = loadConfig({ ...base, ...options }, { env: e, cwd: noFile() });
      return r.ok ? [] : r.problems;
    };
    expect(problems({ jira: { indexLag: 5 } })).toEqual([
      'jira: unknown option(s) indexLag; check the spelling against the README',
    ]);
    expect(problems({ bulkWaitMs: 10 })).toEqual([
      'bulkWaitMs (CASEBRIDGE_BULK_WAIT_MS): Too small: expected number to be >=100',
    ]);
    expect(problems({}, { CASEBRIDGE_JIRA_INDEX_LAG_MS: 'abc' })).toEqual([
      'CASEBRIDGE_JIRA_INDEX_LAG_MS: expected a whole number, got "abc"',
    ]);
  });

  it('takes inline options over CASEBRIDGE_* variables over the config file', () => {
    const cwd = noFile();
    writeFileSync(
      join(cwd, 'casebridge.config.json'),
      JSON.stringify({ url: 'https://file.example.com', projectKey: 'FILE', environment: 'from-file', build: 'b1' }),
    );
    const env = {
      CASEBRIDGE_PROJECT: 'ENVP',
      CASEBRIDGE_TOKEN: 'env-token-1',
      CASEBRIDGE_ENVIRONMENT: 'from-env',
      CASEBRIDGE_DEFECTS: 'false',
      CASEBRIDGE_DRY_RUN: 'calls.json',
    };
    const r = loadConfig({ environment: 'inline' }, { env, cwd });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.config).toMatchObject({
      url: 'https://file.example.com',
      projectKey: 'ENVP',
      environment: 'inline',
      build: 'b1',
      token: 'env-token-1',
      dryRun: 'calls.json',
    });
    expect(r.config.defects.enabled).toBe(false);
    expect(r.sources).toHaveLength(3);
  });

  it('names each problem with its option, its variable and the fix', () => {
    const r = loadConfig(
      { url: 'not a url', projectKey: 'demo', mode: 'cycle', colour: 'red', attachments: { screenshot: 'all' } },
      { env: { CASEBRIDGE_AUTO_CREATE: 'maybe' }, cwd: noFile() },
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const text = r.problems.join('\n');
    expect(text).toMatch(/CASEBRIDGE_AUTO_CREATE: expected true or false, got "maybe"/);
    expect(text).toMatch(/url \(CASEBRIDGE_URL\): expected the Jira base URL/);
    expect(text).toMatch(/projectKey \(CASEBRIDGE_PROJECT\): expected a Jira project key/);
    expect(text).toMatch(/unknown option\(s\) colour/);
    expect(text).toMatch(/attachments: unknown option\(s\) screenshot/);
    expect(text).toMatch(/credentials missing/);
    expect(text).toMatch(/cycle mode needs the test plan key/);
  });

  it('reports a broken config file instead of throwing', () => {
    const cwd = noFile();
    writeFileSync(join(cwd, 'casebridge.config.json'), '{ "url": ');
    const r = loadConfig(base, { env: {}, cwd });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems[0]).toMatch(/not valid JSON/);
  });

  it('never repeats a secret in a problem', () => {
    const r = loadConfig({ ...base, token: 'sekret-token-xyz', url: 'sekret-token-xyz' }, { env: {}, cwd: noFile() });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.join('\n')).not.toContain('sekret-token-xyz');
  });

  it('expands cycle name templates from values and the environment', () => {
    expect(expandTemplate('CI ${GITHUB_RUN_ID} ${build}', { build: '1.2' }, { GITHUB_RUN_ID: '77' })).toBe('CI 77 1.2');
    expect(expandTemplate('CI ${missing}', {}, {})).toBe('CI');
  });
});
