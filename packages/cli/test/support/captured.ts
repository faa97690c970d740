import { main } from '../../src/main.js';

/** What one in-process `casebridge` command line printed, and its exit code. */
export interface Captured {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `main(argv, streams)` in this process with string streams: what a user sees, without spawning the bin.
 * `tty` makes stdout and stderr report themselves as terminals (colour, progress bars).
 */
export async function runCli(
  argv: string[],
  o: { cwd?: string; env?: NodeJS.ProcessEnv; tty?: boolean } = {},
): Promise<Captured> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: { write: (t: string) => (stdout += t), isTTY: o.tty ?? false },
    stderr: { write: (t: string) => (stderr += t), isTTY: o.tty ?? false },
    env: o.env ?? {},
    cwd: o.cwd ?? process.cwd(),
  });
  return { code, stdout, stderr };
}

/** The printed lines joined as a list of `io.out` lines was: without the last line's newline. */
export function text(printed: string): string {
  return printed.endsWith('\n') ? printed.slice(0, -1) : printed;
}
