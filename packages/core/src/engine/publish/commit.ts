import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

/** The repository a project lives in: the nearest folder up from `cwd` holding `.git`; undefined outside one. */
export function repoRootOf(cwd: string): string | undefined {
  let dir = cwd;
  for (;;) {
    if (existsSync(join(dir, '.git'))) return dir;
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/** The project root's path in its repository (`web/` for a project in `web`), '' at the root or outside one. */
export function repoPrefixOf(cwd: string): string {
  const root = repoRootOf(cwd);
  const rel = root ? relative(root, cwd).split(sep).join('/') : '';
  return rel && !rel.startsWith('..') ? `${rel}/` : '';
}

/** A full commit hash: what Code Insights and the build status take (a short one is refused). */
export const FULL_HASH = /^[0-9a-f]{40}$/i;

/** The commit the tests ran on: `CASEBRIDGE_COMMIT`, else the CI's, else `git rev-parse HEAD`; undefined if none. */
export async function commitOf(env: NodeJS.ProcessEnv, cwd: string): Promise<string | undefined> {
  const named =
    env.CASEBRIDGE_COMMIT ??
    env.GIT_COMMIT ??
    env.bamboo_planRepository_revision ??
    env.CI_COMMIT_SHA ??
    env.GITHUB_SHA;
  if (named?.trim()) return named.trim();
  return new Promise((done) => {
    execFile('git', ['rev-parse', 'HEAD'], { cwd, timeout: 5000 }, (err, out) => done(err ? undefined : out.trim()));
  });
}
