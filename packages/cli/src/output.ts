/**
 * Terminal output conventions: colour only on a terminal and never when NO_COLOR is set (https://no-color.org);
 * results on stdout, messages on stderr, so `id=$(casebridge cycle start)` captures only the id.
 */

/** Where a command line writes: the process's streams in the bin, strings in a test. */
export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** What `main` is given: two streams, the environment and the working directory. */
export interface Streams {
  stdout: Output;
  stderr: Output;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** What a command writes through: whole lines on stdout and stderr, and a progress bar redrawn in place. */
export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  /** Text on stderr as is (no newline added): a progress bar that redraws itself with `\r`. */
  progress: (text: string) => void;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Whether stdout is a terminal. */
  tty: boolean;
  /** Whether stderr is a terminal (progress bars go there). */
  errTty: boolean;
}

export function ioOf(s: Streams): Io {
  return {
    out: (line) => s.stdout.write(`${line}\n`),
    err: (line) => s.stderr.write(`${line}\n`),
    progress: (text) => s.stderr.write(text),
    cwd: s.cwd,
    env: s.env,
    tty: Boolean(s.stdout.isTTY),
    // A CI log is not redrawn in place, even when the runner gives the job a terminal.
    errTty: Boolean(s.stderr.isTTY) && !s.env.CI,
  };
}

export function useColour(io: Pick<Io, 'env' | 'tty'>): boolean {
  const noColor = io.env.NO_COLOR;
  if (noColor !== undefined && noColor !== '') return false;
  if (io.env.FORCE_COLOR && io.env.FORCE_COLOR !== '0') return true;
  return io.tty;
}

export function paint(io: Pick<Io, 'env' | 'tty'>) {
  const on = useColour(io);
  const wrap = (code: number) => (s: string) => (on ? `\u001b[${code}m${s}\u001b[0m` : s);
  return { green: wrap(32), red: wrap(31), yellow: wrap(33), dim: wrap(2), bold: wrap(1) };
}
