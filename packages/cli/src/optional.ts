import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { CasebridgeError } from '@casebridge/core';

/**
 * `@casebridge/emulator` is an optional peer of the CLI: `replay`, `doctor`, `junit`, `sync`, `cycle` and `init`
 * never load it (it brings a native SQLite module and the Swagger UI). `emulator` and `demo` load it when it is
 * installed, and otherwise say how to get it.
 */

export const EMULATOR_MISSING = `the emulator is not installed: it is a separate package (it brings a native SQLite module).
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

/** The emulator's command-line file, or a MissingPackageError. */
export function emulatorCli(): string {
  try {
    const pkg = createRequire(import.meta.url).resolve('@casebridge/emulator/package.json');
    return join(dirname(pkg), 'dist', 'cli.js');
  } catch {
    throw new MissingPackageError(EMULATOR_MISSING);
  }
}
