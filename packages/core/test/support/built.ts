import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll } from 'vitest';

/**
 * The built files of @casebridge/core that the calling `describe` loads (`dist/<file>`, absolute paths). A missing one
 * fails its tests with the fix named, never skips them: a suite that skips itself without a build passes on a fresh
 * clone while testing nothing.
 */
export function needsBuild(...files: string[]): (file: string) => string {
  const path = (file: string) => fileURLToPath(new URL(`../../dist/${file}`, import.meta.url));
  beforeAll(() => {
    const missing = files.filter((f) => !existsSync(path(f)));
    if (missing.length > 0) {
      throw new Error(`missing ${missing.map((f) => `packages/core/dist/${f}`).join(', ')}: run npm run build`);
    }
  });
  return path;
}
