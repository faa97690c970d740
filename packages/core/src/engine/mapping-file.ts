import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { MappingFile } from './mapping.js';

/**
 * Adds keys to the mapping file: read, merge, write to a temporary file and rename, so a concurrent writer on the
 * same machine loses nothing and a reader never sees half a file. Keys are sorted for reviewable diffs.
 */
export function writeMapping(path: string, added: MappingFile): void {
  let current: MappingFile = {};
  try {
    current = JSON.parse(readFileSync(path, 'utf8')) as MappingFile;
  } catch {
    current = {};
  }
  const merged: MappingFile = { ...current, ...added };
  const sorted = Object.fromEntries(
    Object.keys(merged)
      .sort()
      .map((k) => [k, merged[k] as string | string[]]),
  );
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${randomUUID().slice(0, 8)}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(sorted, null, 2)}\n`);
  renameSync(tmp, path);
}
