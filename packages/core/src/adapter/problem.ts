/** At most this many distinct problem lines per reporter: a failing per-test hook must not flood stderr. */
const MAX_PROBLEMS = 21;

/**
 * For reporters: prints a failed hook once per distinct line on stderr and never throws, so nothing reaches the
 * runner (Playwright 1.62+ and Vitest fail a run on it). Usage: `catch (err) { this.problem('onEnd', err); }`.
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
