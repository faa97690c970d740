import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Engine, type RunSummary } from '@casebridge/core';
import { glob, isDynamicPattern } from 'tinyglobby';
import { JunitError, type JunitFileStats, readJunit } from './parse.js';

export { JunitError, type JunitFileStats, readJunit } from './parse.js';

export interface JunitIo {
  out: (line: string) => void;
  err: (line: string) => void;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** What `--json` prints: the engine's summary and, per file, what was read or why it could not be. */
export interface JunitJsonSummary extends RunSummary {
  files: Array<JunitFileStats & { error?: string }>;
}

const MAX_NOTES_SHOWN = 20;

/**
 * Expands the arguments into files; a pattern or path that gives nothing is a problem line. Files found in a folder
 * are `scanned`: one that turns out not to be JUnit XML (a pom.xml beside the reports) is skipped, not an error.
 */
async function expand(
  args: string[],
  cwd: string,
): Promise<{ files: string[]; scanned: Set<string>; problems: string[] }> {
  const files: string[] = [];
  const scanned = new Set<string>();
  const problems: string[] = [];
  for (const arg of args) {
    // A name like `report[1].xml` is a file when it exists, a pattern otherwise.
    if (isDynamicPattern(arg) && !existsSync(resolve(cwd, arg))) {
      const found = await glob(arg, { cwd, absolute: true, onlyFiles: true, expandDirectories: false });
      if (found.length === 0) problems.push(`no file matches ${arg} (in ${cwd})`);
      files.push(...found.sort());
      continue;
    }
    const path = resolve(cwd, arg);
    let isDir = false;
    try {
      isDir = statSync(path).isDirectory();
    } catch {
      problems.push(`${arg}: no such file`);
      continue;
    }
    if (!isDir) {
      files.push(path);
      continue;
    }
    const found = await glob('**/*.xml', {
      cwd: path,
      absolute: true,
      onlyFiles: true,
      ignore: ['**/node_modules/**'],
    });
    if (found.length === 0) problems.push(`${arg}: a folder without *.xml files`);
    for (const f of found) scanned.add(f);
    files.push(...found.sort());
  }
  return { files: [...new Set(files)], scanned, problems };
}

/**
 * `casebridge junit` (its options parsed by the table in commands/junit.ts): streams each file's test cases into the engine as they are read, then waits for delivery.
 * Resolves to the exit code; never rejects on bad input (it becomes a line on `io.err` and exit code 2).
 */
export async function junitCommand(
  options: { json: boolean; 'dry-run': boolean },
  positionals: string[],
  io: JunitIo,
): Promise<number> {
  if (positionals.length === 0) {
    io.err(
      'casebridge junit: expected one or more JUnit XML files, folders or globs, e.g. casebridge junit report.xml',
    );
    return 2;
  }
  const { files, scanned, problems } = await expand(positionals, io.cwd);
  if (files.length === 0 || problems.length > 0) {
    for (const p of problems) io.err(`casebridge junit: ${p}`);
    if (files.length === 0) return 2;
    // Some arguments matched and some did not: report what exists, still exit 2 at the end.
  }

  const json = options.json;
  const inline = options['dry-run'] ? { dryRun: true } : {};
  // With --json, stdout carries only the JSON document: the engine's summary and problems go to stderr.
  const say = json ? io.err : io.out;
  // Files an XML names are resolved beside it: its folder may be uploaded from, like the project folder.
  const roots = [...new Set(files.map((f) => dirname(resolve(io.cwd, f))))];
  const engine = Engine.create(inline, {
    cwd: io.cwd,
    runner: { name: 'junit' },
    env: io.env,
    out: say,
    attachmentRoots: roots,
  });
  engine.begin();
  const read: JunitJsonSummary['files'] = [];
  let inputErrors = problems.length;
  for (const file of files) {
    const reader = readJunit(file, { cwd: io.cwd });
    try {
      for await (const result of reader) engine.add(result);
      read.push({ ...reader.stats });
    } catch (err) {
      const message = err instanceof JunitError ? err.message : `${reader.stats.file}: ${(err as Error).message}`;
      if (err instanceof JunitError && err.code === 'not-junit' && scanned.has(file)) {
        io.err(`casebridge junit: skipped ${message}`);
        continue;
      }
      inputErrors += 1;
      read.push({ ...reader.stats, error: message });
      io.err(`casebridge junit: ${message}`);
      if (reader.stats.testcases > 0 && engine.enabled) {
        io.err(`  the ${reader.stats.testcases} test case(s) read before the problem are reported`);
      }
    }
  }
  const notes = read.flatMap((f) => f.notes);
  for (const n of notes.slice(0, MAX_NOTES_SHOWN)) io.err(`casebridge junit: ${n}`);
  if (notes.length > MAX_NOTES_SHOWN) io.err(`casebridge junit: … and ${notes.length - MAX_NOTES_SHOWN} more notes`);

  const { summary } = await engine.end();
  const testcases = read.reduce((n, f) => n + f.testcases, 0);
  say(`casebridge junit: read ${testcases} test case(s) from ${read.length} file(s)`);
  if (json) io.out(JSON.stringify({ ...summary, files: read } satisfies JunitJsonSummary, null, 2));
  if (inputErrors > 0) return 2;
  if (!engine.enabled) return 1;
  return summary.journaled > 0 || summary.problems.length > 0 || summary.serviceDown ? 1 : 0;
}
