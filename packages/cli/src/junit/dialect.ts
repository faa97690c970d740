import { isAbsolute, relative } from 'node:path';

/**
 * How each JUnit XML writer names its tests, and how casebridge turns that into a file and a title path. The title
 * path holds the describe/class parts that a reader recognises, then the test's own name, so the mapping-file name
 * (`file > … > title`) reads like the one the runner's own reporter would use.
 *
 * | dialect    | detected by                              | file                    | title path                    |
 * |------------|------------------------------------------|-------------------------|-------------------------------|
 * | pytest     | root `pytest tests`, suite `pytest`      | `file`, else the module | classes after module, name    |
 * | go         | suite property `go.version`, `Test…`     | the package (classname) | name split on `/` (subtests)  |
 * | vitest     | root `vitest tests`                      | classname (test file)   | name split on ` > `           |
 * | playwright | names with ` › `                         | classname (test file)   | name split on ` › ` (project: |
 * |            |                                          |                         | `[p] ›` prefix or hostname)   |
 * | mocha      | root `Mocha Tests` (Cypress)             | `file` of Root Suite    | describe titles, classname    |
 * | jest       | root `jest tests` (jest-junit)           | `file`, else the suite  | name (classname repeats it)   |
 * | junit      | anything else (Surefire, Gradle, …)      | `file`, else classname  | name                          |
 */
export type Dialect = 'pytest' | 'go' | 'vitest' | 'playwright' | 'mocha' | 'jest' | 'junit';

/** The dialect a root element announces, when it does. */
export function dialectOfRoot(name: string, attrs: Record<string, string>): Dialect | undefined {
  const n = attrs.name ?? '';
  if (n === 'pytest tests' || (name === 'testsuite' && n === 'pytest')) return 'pytest';
  if (n === 'vitest tests') return 'vitest';
  if (n === 'jest tests') return 'jest';
  if (n === 'Mocha Tests') return 'mocha';
  return undefined;
}

export interface CaseContext {
  dialect: Dialect | undefined;
  /** Names of the enclosing `<testsuite>` elements, outermost first. */
  suites: string[];
  /** A `file` attribute of an enclosing suite, or of the last mocha Root Suite. */
  suiteFile?: string;
  /** Whether an enclosing suite has the `go.version` property. */
  go: boolean;
  /** The innermost suite's `hostname` (Playwright writes the project name there). */
  hostname?: string;
  cwd: string;
}

const GO_NAME = /^(?:Test|Benchmark|Example|Fuzz)[A-Z0-9_]?\w*(?:\/|$)/;

function which(ctx: CaseContext, name: string, classname: string): Dialect {
  if (ctx.dialect) return ctx.dialect;
  if (ctx.go || (GO_NAME.test(name) && (classname.includes('/') || !classname.includes('.')))) return 'go';
  if (name.includes(' › ')) return 'playwright';
  return 'junit';
}

/** A path as the mapping file spells it: relative to the project root, forward slashes, no leading `./`. */
export function projectPath(cwd: string, file: string): string {
  const rel = isAbsolute(file) ? relative(cwd, file) : file;
  return rel.replace(/\\/g, '/').replace(/^\.\//, '');
}

/** pytest's classname is `pkg.module.Class.Inner`: classes are the trailing capitalised parts. */
function pytestParts(classname: string, file: string | undefined): { module: string; classes: string[] } {
  const parts = classname.split('.').filter(Boolean);
  if (file) {
    const mod = file.replace(/\.py$/, '').replace(/[\\/]/g, '.');
    if (classname === mod || classname.startsWith(`${mod}.`)) {
      return { module: mod, classes: classname.slice(mod.length).split('.').filter(Boolean) };
    }
  }
  let i = parts.length;
  while (i > 1 && /^[A-Z]/.test(parts[i - 1] ?? '')) i -= 1;
  return { module: parts.slice(0, i).join('.'), classes: parts.slice(i) };
}

/** File and title path of one `<testcase>`. */
export function identify(
  ctx: CaseContext,
  attrs: { name: string; classname: string; file?: string },
): { dialect: Dialect; file: string; titlePath: string[]; project?: string } {
  const { name, classname } = attrs;
  const dialect = which(ctx, name, classname);
  const ownFile = attrs.file ? projectPath(ctx.cwd, attrs.file) : undefined;
  const suite = ctx.suites[ctx.suites.length - 1] ?? '';
  switch (dialect) {
    case 'pytest': {
      const { module, classes } = pytestParts(classname, ownFile);
      const file = ownFile ?? (module ? `${module.replace(/\./g, '/')}.py` : suite);
      return { dialect, file, titlePath: [...classes, name] };
    }
    case 'go':
      return { dialect, file: ownFile ?? (classname || suite), titlePath: name.split('/') };
    case 'vitest':
      return { dialect, file: ownFile ?? (classname || suite), titlePath: name.split(' > ') };
    case 'playwright': {
      // The project: `[chromium] › …` with includeProjectInTestName, else the suite's hostname.
      const parts = name.split(' › ');
      const named = /^\[(.+)\]$/.exec(parts[0] ?? '');
      if (named) parts.shift();
      const project = named?.[1] ?? ctx.hostname;
      return { dialect, file: ownFile ?? (classname || suite), titlePath: parts, ...(project ? { project } : {}) };
    }
    case 'mocha': {
      // mocha-junit-reporter: name is the full title, classname the test's own title.
      const file = ownFile ?? (ctx.suiteFile ? projectPath(ctx.cwd, ctx.suiteFile) : classname || suite);
      const describes = name.endsWith(` ${classname}`) ? name.slice(0, -classname.length - 1) : '';
      return { dialect, file, titlePath: classname && describes ? [describes, classname] : [name] };
    }
    case 'jest':
      return {
        dialect,
        file: ownFile ?? (ctx.suiteFile ? projectPath(ctx.cwd, ctx.suiteFile) : suite),
        titlePath: [name],
      };
    default:
      return {
        dialect,
        file: ownFile ?? (ctx.suiteFile ? projectPath(ctx.cwd, ctx.suiteFile) : classname || suite || 'junit'),
        titlePath: [name],
      };
  }
}

/**
 * Keys that a runner glued to the next word with `_` (Go turns `t.Run("PROJ-5 with tax")` into `PROJ-5_with_tax`):
 * the engine's key pattern stops at word characters, so they are handed over as `case` annotations instead. The
 * engine still checks them against the project's key pattern.
 */
export function gluedKeys(title: string): string[] {
  return [...title.matchAll(/(?<![A-Za-z0-9])([A-Z][A-Z0-9]+-[1-9][0-9]*)_/g)].map((m) => m[1] as string);
}
