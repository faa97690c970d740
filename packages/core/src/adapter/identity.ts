import { hash } from 'node:crypto';
import { isAbsolute, relative } from 'node:path';

/**
 * A test's identity across runs, machines and shards: a hash of its file (relative to the project root, forward
 * slashes), its title path (describe blocks and title) and its project. Not the runner's own id: Playwright's salts
 * merged reports, Vitest's depends on the order of the tests in the file.
 *
 * The id is the `TestResult.id` that the defect fingerprint hashes and the journal keys its entries by, so every
 * adapter must compute it here: one that hashed differently would file a second defect for the same failure. The
 * formula is frozen (the tests pin its output); a project of `undefined` and of `''` give the same id.
 */
export function stableId(file: string, titlePath: readonly string[], project?: string): string {
  // One-shot `hash` (Node 20.12+): the digest of createHash('sha1').update(…), without a Hash object per test.
  return hash('sha1', JSON.stringify([file, titlePath, project ?? '']), 'hex').slice(0, 20);
}

/**
 * `file` relative to `root`, with forward slashes: the `file` of a test's identity. A relative `file` is taken as
 * already relative to the root (only its slashes change).
 */
export function relativeFile(root: string, file: string): string {
  return (isAbsolute(file) ? relative(root, file) : file).replace(/\\/g, '/');
}

/**
 * Whether a path that `relativeFile` made leaves the root (`../x`, or another drive on Windows): the test file lies
 * outside the project, e.g. a merged report recorded on a machine whose checkout path differs.
 */
export function leavesRoot(rel: string): boolean {
  return /^\.\.(?:[\\/]|$)/.test(rel) || isAbsolute(rel);
}

/**
 * Test files' relative names made once per file, for the root they were made against (`K`: a root path, or an
 * adapter's paths object): an adapter asks per test, and a name made per test was a copy per test kept to the end of
 * the run and a tenth of the hand-over's time. Another root empties it; at most 10,000 files are kept.
 */
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
