import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { LONG } from './setup/sequencer.js';
import { ROOT } from './support/runner.js';

it('every file the sequencer starts first exists (a renamed one would silently start last on a clean clone)', () => {
  expect(LONG.filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
  expect(new Set(LONG).size).toBe(LONG.length);
});
