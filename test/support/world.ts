import { TestManagementClient } from '@casebridge/core';
import { type RunningEmulator, startEmulator } from '@casebridge/emulator';
import { afterAll, beforeAll, beforeEach } from 'vitest';

/**
 * The world of an end-to-end file: one emulator for the file, on its realistic profile (the Jira Data Center the
 * reporters meet: index lag, result window, workflows), the reporters' environment, and what a person does in Jira
 * before a run. Each file runs alone and in any order.
 */

export const TOKEN = 'casebridge-dev-token';

/**
 * Starts the file's emulator before its tests and closes it after; with `reset` (the default) each test starts from
 * the seed. `emu()` gives it.
 */
export function useEmulator(o: { reset?: boolean } = {}): () => RunningEmulator {
  let emu: RunningEmulator | undefined;
  beforeAll(async () => {
    emu = await startEmulator({ port: 0 });
  });
  afterAll(async () => {
    await emu?.close();
  });
  if (o.reset !== false) {
    beforeEach(async () => {
      await emu?.reset();
    });
  }
  return () => {
    if (!emu) throw new Error('the emulator is not started yet (useEmulator starts it in beforeAll)');
    return emu;
  };
}

/** The reporters' environment for the seed's project DEMO, with `extra` on top. */
export function reporterEnv(emu: RunningEmulator, extra: Record<string, string> = {}): Record<string, string> {
  return {
    CASEBRIDGE_URL: emu.url,
    CASEBRIDGE_TOKEN: TOKEN,
    CASEBRIDGE_PROJECT: 'DEMO',
    ...extra,
  };
}

/** A client with the reporters' credentials, as a person's script or the synapseRT UI acts. Close it after use. */
export function admin(emu: RunningEmulator): TestManagementClient {
  return new TestManagementClient({ baseUrl: emu.url, auth: { type: 'bearer', token: TOKEN } });
}

/**
 * What the test changed in the store by hand (a label, a closed bug) or over HTTP, as a person did well before the
 * run: the store's edits are committed and every node's index catches up at once, as after the profile's index lag,
 * so a search shows them.
 */
export async function indexed(emu: RunningEmulator): Promise<void> {
  emu.catchUpIndex();
}
