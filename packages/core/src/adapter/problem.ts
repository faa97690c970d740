/** How many distinct problem lines one reporter prints at most: a problem in a per-test hook must not flood stderr. */
const MAX_PROBLEMS = 21;

/**
 * For reporters: a function that tells, on one line on stderr, that a hook failed and the run goes on without it.
 * Each distinct line is printed once, and at most 21 of them; writing never throws (a closed stderr loses the
 * line, not the run). Every reporter hook catches what it throws and hands it here: nothing of casebridge's reaches
 * the runner (a reporter error fails a Playwright run from 1.62, and Vitest fails a run on a rejected hook).
 *
 * ```ts
 * private readonly problem = problemPrinter('Cypress');
 * onEnd() { try { ... } catch (err) { this.problem('onEnd', err); } }
 * // casebridge: the Cypress reporter failed in onEnd and goes on without it: <message>
 * ```
 */
export function problemPrinter(
  runner: string,
  write: (text: string) => void = (text) => process.stderr.write(text),
): (where: string, err: unknown) => void {
  const printed = new Set<string>();
  return (where, err) => {
    const line = `casebridge: the ${runner} reporter failed in ${where} and goes on without it: ${
      err instanceof Error ? err.message : String(err)
    }`;
    if (printed.has(line) || printed.size >= MAX_PROBLEMS) return;
    printed.add(line);
    try {
      write(`${line}\n`);
    } catch {
      // Nothing left to tell it with.
    }
  };
}
