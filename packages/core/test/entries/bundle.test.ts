import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist');

/**
 * V8 keeps a script's source for as long as the script lives, as a one-byte string when every character fits in
 * Latin-1 and as a two-byte string otherwise. One dash in a regular expression made the whole 500 kB bundle cost
 * 1 MB of heap in every runner process: the bundles must stay one-byte.
 */
describe('the built bundles', () => {
  const files = readdirSync(DIST).filter((f) => /\.(c?js)$/.test(f));

  it('exist (the package is built before its tests run)', () => {
    expect(files).toEqual(expect.arrayContaining(['index.js', 'index.cjs', 'contract.js', 'runtime.js']));
  });

  it('hold only Latin-1 characters, so that V8 keeps their source one byte per character', () => {
    const wide = files.flatMap((f) => {
      const text = readFileSync(join(DIST, f), 'utf8');
      const at = [...text].findIndex((c) => (c.codePointAt(0) ?? 0) > 0xff);
      return at < 0 ? [] : [`${f}: ${JSON.stringify(text.slice(Math.max(0, at - 40), at + 10))}`];
    });
    expect(wide).toEqual([]);
  });
});
