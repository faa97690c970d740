import { hash } from 'node:crypto';
import { isAbsolute, relative } from 'node:path';

/**
 * A test's identity across runs, machines and shards: a hash of file, title path and project, not the runner's id
 * (Playwright salts it). Defects and the journal key on it, so the formula is frozen; `undefined` project equals `''`.
 */
export function stableId(file: string, titlePath: readonly string[], project?: string): string {
  return hash('sha1', JSON.stringify([file, titlePath, project ?? '']), 'hex').slice(0, 20);
}

/** `file` relative to `root`, with forward slashes; a relative `file` is taken as already relative to the root. */
export function relativeFile(root: string, file: string): string {
  return (isAbsolute(file) ? relative(root, file) : file).replace(/\\/g, '/');
}

/** Whether a path from `relativeFile` leaves the root (`../x`, or another Windows drive), e.g. a merged report. */
export function leavesRoot(rel: string): boolean {
  return /^\.\.(?:[\\/]|$)/.test(rel) || isAbsolute(rel);
}

/** Test files' relative names, made once per file for one root instead of once per test; at most 10,000 kept. */
export class FileNames<K> {
  private key: K | undefined;
  private readonly files = new Map<string, string>();

  constructor(private readonly make: (key: K, file: string) => string) {}

  of(key: K, file: string): string {
    if (this.key !== key) {
      this.key = key;
      this.files.clear();
    }
    let name = this.files.get(file);
    if (name === undefined) {
      name = this.make(key, file);
      if (this.files.size < 10_000) this.files.set(file, name);
    }
    return name;
  }
}
