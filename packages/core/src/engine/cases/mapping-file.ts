import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { type MappingFile, mappingProblems } from './mapping.js';

/** Adds keys to the mapping file atomically (merge, temp file, rename), so concurrent writers lose nothing; sorted. */
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

/** Reads and checks the mapping file: `{}` when absent; its problems, with an empty mapping, when unusable. */
export function readMappingFile(path: string, keyRe: RegExp): { mapping: MappingFile; problems: string[] } {
  if (!existsSync(path)) return { mapping: {}, problems: [] };
  try {
    const value: unknown = JSON.parse(readFileSync(path, 'utf8'));
    const problems = mappingProblems(value, keyRe);
    return { mapping: problems.length === 0 ? (value as MappingFile) : {}, problems };
  } catch (err) {
    return { mapping: {}, problems: [`not valid JSON (${(err as Error).message})`] };
  }
}
