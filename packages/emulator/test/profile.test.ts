import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PROFILES, type RunningEmulator, startEmulator } from '../src/index.js';
import { resolveBehaviour } from '../src/profile.js';
import { call } from './helpers.js';
import { ensureBuilt, runCli, startCli, stopCli } from './spawn.js';

/**
 * The Jira behaviour: a profile (realistic or ideal) with knobs over it, from startEmulator's options, the command
 * line and `PUT /__emulator/jira`; a bad knob is refused naming it.
 */

let emu: RunningEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

describe('profiles and knobs', () => {
  it('the realistic defaults follow Jira Data Center; ideal is the kind stand-in', () => {
    expect(PROFILES.realistic).toEqual({
      searchMaxResults: 100,
      resultWindow: 10_000,
      resultWindowMode: 'error',
      indexLagMs: 1000,
      nodes: 2,
      textSearch: 'tokenised',
      patAsBasic: false,
      captchaAfterFailedLogins: 3,
      bulkCreateMax: 50,
      createMs: 25,
    });
    expect(resolveBehaviour('ideal', { nodes: 3, indexLagMs: undefined })).toEqual({ ...PROFILES.ideal, nodes: 3 });
    expect(() => resolveBehaviour('harsh')).toThrow(`profile must be 'realistic' or 'ideal', got "harsh"`);
    expect(() => resolveBehaviour('realistic', { nodes: 0 })).toThrow(/invalid Jira behaviour: jira.nodes: .*>=1/);
    expect(() => resolveBehaviour('realistic', { colour: 'red' } as never)).toThrow(/colour/);
  });

  it('startEmulator refuses a bad knob; GET and PUT /__emulator/jira read and change knobs; a reset restores them', async () => {
    await expect(startEmulator({ port: 0, jira: { resultWindowMode: 'quiet' as never } })).rejects.toThrow(
      /jira.resultWindowMode/,
    );
    emu = await startEmulator({ port: 0, profile: 'realistic', jira: { indexLagMs: 250 } });
    expect((await call(emu, 'GET', '/__emulator/jira')).json).toEqual({ ...PROFILES.realistic, indexLagMs: 250 });
    const put = await call(emu, 'PUT', '/__emulator/jira', { body: { indexLagMs: [0, 2500], resultWindow: null } });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ indexLagMs: [0, 2500], resultWindow: null, nodes: 2 });
    expect(emu.jira.indexLagMs).toEqual([0, 2500]);
    const bad = await call(emu, 'PUT', '/__emulator/jira', { body: { nodes: 'two' } });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toMatch(/jira.nodes/);
    await emu.reset();
    expect(emu.jira).toEqual({ ...PROFILES.realistic, indexLagMs: 250 });
  });
});

describe('command line', () => {
  beforeAll(ensureBuilt, 240_000);

  it('--profile and the Jira flags set the behaviour; a bad value exits 2 naming the flag', async () => {
    const cli = await startCli([
      '--port',
      '0',
      '--profile',
      'realistic',
      '--index-lag',
      '100,900',
      '--search-max-results',
      '20',
      '--result-window',
      'off',
      '--pat-as-basic',
      'on',
      '--captcha-after',
      'off',
      '--rate-limit',
      '50/60',
      '--rate-limit-per-user',
      '--retry-after',
      '0',
    ]);
    try {
      expect(cli.stdout()).toContain('Jira: realistic profile, 2 node(s), index lag 100,900 ms');
      const knobs = (await call({ url: cli.url } as RunningEmulator, 'GET', '/__emulator/jira')).json;
      expect(knobs).toMatchObject({
        indexLagMs: [100, 900],
        searchMaxResults: 20,
        resultWindow: null,
        patAsBasic: true,
        captchaAfterFailedLogins: null,
      });
      const r = await call({ url: cli.url } as RunningEmulator, 'GET', '/rest/api/2/myself');
      expect(r.headers.get('x-ratelimit-limit')).toBe('50');
      expect(r.headers.get('x-ratelimit-interval-seconds')).toBe('60');
    } finally {
      await stopCli(cli);
    }
    for (const [args, message] of [
      [['--profile', 'harsh'], /profile must be 'realistic' or 'ideal', got "harsh"/],
      [['--nodes', 'two'], /--nodes expects a number, got "two"/],
      [['--pat-as-basic', 'yes'], /--pat-as-basic expects on or off, got "yes"/],
      [['--result-window-mode', 'quiet'], /jira.resultWindowMode/],
      [
        ['--rate-limit', '10/0'],
        /--rate-limit expects requests per second above 0, got "10\/0" \(or N\/SECONDS above 0, e.g. 100\/60\)/,
      ],
    ] as [string[], RegExp][]) {
      const r = await runCli(['--port', '0', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});
