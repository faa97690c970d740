import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { CasebridgeError } from '@casebridge/core';

/**
 * Two optional peers of the CLI, loaded only by the commands that need them, which otherwise say how to get them:
 * `@casebridge/emulator` (the Swagger UI and the emulator's own code) for `emulator` and `demo`, and the MCP SDK
 * (`@modelcontextprotocol/sdk`, with express, hono, ajv and zod: about 75 packages) for `mcp`. Every other command
 * runs without them.
 */

export const EMULATOR_MISSING = `the emulator is not installed: it is a separate package (it brings the Swagger UI).
Install it beside the CLI, then run the command again:
  npm i -D @casebridge/emulator        (or: npx -p @casebridge/cli -p @casebridge/emulator casebridge emulator)`;

export class MissingPackageError extends CasebridgeError {
  constructor(message: string) {
    super('missing-package', message);
  }
}

/** The emulator's module, or a MissingPackageError that says how to install it. */
export async function loadEmulator(): Promise<typeof import('@casebridge/emulator')> {
  try {
    return await import('@casebridge/emulator');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') throw new MissingPackageError(EMULATOR_MISSING);
    throw err;
  }
}

export const MCP_MISSING = `casebridge mcp needs the MCP SDK, an optional package of the CLI (about 75 packages with its own).
Install it beside the CLI, then run the command again:
  npm i -D @modelcontextprotocol/sdk        (or: npx -p @casebridge/cli -p @modelcontextprotocol/sdk casebridge mcp)`;

const missing = (err: unknown) => {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
};

/** The MCP server's module (it imports the SDK), or a MissingPackageError that says how to install the SDK. */
export async function loadMcp(): Promise<typeof import('./mcp/run.js')> {
  try {
    return await import('./mcp/run.js');
  } catch (err) {
    if (missing(err) && String((err as Error).message).includes('@modelcontextprotocol/sdk')) {
      throw new MissingPackageError(MCP_MISSING);
    }
    throw err;
  }
}

/** The emulator's command-line file, or a MissingPackageError. */
export function emulatorCli(): string {
  try {
    const pkg = createRequire(import.meta.url).resolve('@casebridge/emulator/package.json');
    return join(dirname(pkg), 'dist', 'cli.js');
  } catch {
    throw new MissingPackageError(EMULATOR_MISSING);
  }
}
