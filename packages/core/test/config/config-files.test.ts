import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_FILES, describeSearched, loadConfig } from '../../src/engine/config/load.js';
import { defineCasebridgeConfig } from '../../src/runtime/channel.js';

/** `casebridge.config.*`: JSON or a module, one per project, with `searched` naming every place looked at. */

const env = { CASEBRIDGE_TOKEN: 'file-test-token-1' };
const project = (name: string, text: string) => {
  const dir = mkdtempSync(join(tmpdir(), 'cb-config-file-'));
  writeFileSync(join(dir, name), text);
  return dir;
};
const options = { url: 'https://jira.example.com', projectKey: 'MOD', testPlan: 'MOD-1', mode: 'cycle' as const };

describe('config files', () => {
  it.each([
    ['casebridge.config.json', JSON.stringify(options)],
    ['casebridge.config.mjs', `export default ${JSON.stringify(options)};`],
    ['casebridge.config.cjs', `module.exports = ${JSON.stringify(options)};`],
    ['casebridge.config.js', `module.exports = ${JSON.stringify(options)};`],
  ])('reads %s', (name, text) => {
    const cwd = project(name, text);
    const r = loadConfig({}, { env, cwd });
    if (!r.ok) throw new Error(r.problems.join('\n'));
    expect(r.config).toMatchObject(options);
    expect(r.sources[0]).toBe(join(cwd, name));
    expect(describeSearched(cwd, r.searched)).toBe(
      './casebridge.config.{json,mjs,cjs,js,ts,mts,cts}, CASEBRIDGE_* environment variables, reporter options',
    );
    expect(r.searched).toEqual([
      ...CONFIG_FILES.map((f) => join(cwd, f)),
      'CASEBRIDGE_* environment variables',
      'reporter options',
    ]);
  });

  it('reads an ES module that uses the typed helper', () => {
    expect(defineCasebridgeConfig(options)).toBe(options);
    // The helper is an identity function: a module using its result is read like a plain object.
    const cwd = project(
      'casebridge.config.mjs',
      'const defineCasebridgeConfig = (o) => o;\nexport default defineCasebridgeConfig({ url: "https://jira.example.com", projectKey: "HELP" });',
    );
    const r = loadConfig({}, { env, cwd });
    expect(r.ok && r.config.projectKey).toBe('HELP');
  });

  it('names a module that cannot be loaded, a wrong export and two config files', () => {
    const broken = loadConfig({}, { env, cwd: project('casebridge.config.mjs', 'export default {;') });
    expect(broken.ok).toBe(false);
    if (!broken.ok) expect(broken.problems[0]).toMatch(/casebridge\.config\.mjs: could not be loaded/);

    const wrong = loadConfig({}, { env, cwd: project('casebridge.config.cjs', 'module.exports = 42;') });
    expect(!wrong.ok && wrong.problems[0]).toMatch(/expected its default export to be an object of options/);

    const two = project('casebridge.config.json', JSON.stringify(options));
    writeFileSync(join(two, 'casebridge.config.cjs'), `module.exports = ${JSON.stringify(options)};`);
    const both = loadConfig({}, { env, cwd: two });
    expect(!both.ok && both.problems[0]).toMatch(
      /more than one config file: .*casebridge\.config\.json, .*casebridge\.config\.cjs; keep one/,
    );
  });

  it('says which Node a TypeScript config file needs when this one cannot strip types', () => {
    const cwd = project(
      'casebridge.config.ts',
      `const o: { url: string } = { url: 'https://jira.example.com' };\nexport default { ...o, projectKey: 'TS' };`,
    );
    const r = loadConfig({}, { env, cwd });
    const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
    if (major > 22 || (major === 22 && minor >= 18)) {
      expect(r.ok && r.config.projectKey).toBe('TS');
    } else {
      expect(!r.ok && r.problems[0]).toMatch(
        /TypeScript config files need Node 22\.18 or later .*use casebridge\.config\.mjs or \.json/,
      );
    }
  });

  it('never puts a token from a config module into a problem line', () => {
    const cwd = project(
      'casebridge.config.cjs',
      `module.exports = { url: 'not a url', token: 'module-secret-token-9' };`,
    );
    const r = loadConfig({}, { env: {}, cwd });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.join('\n')).not.toContain('module-secret-token-9');
  });
});
