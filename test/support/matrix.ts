import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ROOT, run } from './runner.js';

/**
 * The version matrix: fixture projects that install a given runner version from the registry, with casebridge
 * installed the way a user gets it — from the packed tarballs of our packages, not from workspace links (a link
 * would let a package resolve the repository's copy of a runner instead of the fixture's).
 */

const PACKS = join(ROOT, 'test', '.fixtures', 'packs');
const PACKAGES = ['core', 'playwright', 'vitest', 'jest', 'cli'] as const;
export type Packed = (typeof PACKAGES)[number];

let packed: Promise<Record<Packed, string>> | undefined;

/** Packs our packages (once per process) and returns the tarball of each. Needs a build (`.ci/setup` makes one). */
export function packs(): Promise<Record<Packed, string>> {
  packed ??= (async () => {
    // Test files run in parallel processes: pack into a private folder, then move the tarballs into place.
    const tmp = join(PACKS, `.tmp-${process.pid}-${Date.now()}`);
    mkdirSync(tmp, { recursive: true });
    const args = ['pack', '--silent', '--pack-destination', tmp, ...PACKAGES.flatMap((p) => ['-w', `packages/${p}`])];
    const out = await run('npm', args, ROOT, {}, 120_000);
    if (out.code !== 0) throw new Error(`npm pack failed:\n${out.stdout}\n${out.stderr}`);
    const result = {} as Record<Packed, string>;
    for (const file of readdirSync(tmp)) {
      const name = PACKAGES.find((p) => file.startsWith(`casebridge-${p}-`));
      if (!name) continue;
      // Content-addressed names: a fixture's stamp changes exactly when a package changes.
      const hash = createHash('sha1')
        .update(readFileSync(join(tmp, file)))
        .digest('hex')
        .slice(0, 12);
      const target = join(PACKS, `casebridge-${name}-${hash}.tgz`);
      if (!existsSync(target)) renameSync(join(tmp, file), target);
      result[name] = target;
    }
    rmSync(tmp, { recursive: true, force: true });
    for (const p of PACKAGES) if (!result[p]) throw new Error(`npm pack did not produce @casebridge/${p}`);
    return result;
  })();
  return packed;
}

export interface MatrixProject {
  /** Folder name under test/.fixtures. */
  name: string;
  /** Registry dependencies, e.g. `{ vitest: '3.2.4' }` (exact versions keep the matrix reproducible). */
  dependencies: Record<string, string>;
  /** Which of our packages to install (core always comes along as their dependency). */
  casebridge: Packed[];
  /** Extra package.json fields (e.g. `type: 'module'`, `jest` config). */
  packageJson?: Record<string, unknown>;
}

/**
 * Creates (or reuses) `test/.fixtures/<name>` with the dependencies installed. The install is skipped when the
 * dependencies and our tarballs are unchanged since the last one. Write the project's own files with `writeFiles`
 * afterwards (they are not part of the install stamp).
 */
export async function matrixProject(p: MatrixProject): Promise<string> {
  const dir = join(ROOT, 'test', '.fixtures', p.name);
  const tarballs = await packs();
  const deps: Record<string, string> = { ...p.dependencies };
  // Our tarballs: core too, so the packed adapter finds the packed core rather than a registry one.
  for (const name of new Set<Packed>(['core', ...p.casebridge])) deps[`@casebridge/${name}`] = `file:${tarballs[name]}`;
  const pkg = {
    name: `casebridge-matrix-${p.name}`,
    private: true,
    version: '0.0.0',
    ...p.packageJson,
    dependencies: deps,
  };
  // npm needs the file: dependencies of the adapter (its `@casebridge/core` range) to meet the packed core.
  const overrides = { '@casebridge/core': `file:${tarballs.core}` };
  const text = `${JSON.stringify({ ...pkg, overrides }, null, 2)}\n`;
  const stamp = join(dir, 'node_modules', '.casebridge-matrix-stamp');
  const wanted = createHash('sha1').update(text).digest('hex');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), text);
  const out = await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--no-package-lock', '--install-links', '--loglevel=error'],
    dir,
    { npm_config_update_notifier: 'false', npm_config_workspaces: 'false' },
    600_000,
  );
  if (out.code !== 0) throw new Error(`npm install in ${p.name} failed:\n${out.stdout}\n${out.stderr}`);
  writeFileSync(stamp, wanted);
  return dir;
}

/** Writes files into a project folder (creating folders), replacing what was there under the same names. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    const file = join(dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}
