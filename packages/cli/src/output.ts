/**
 * Terminal output conventions: colour only on a terminal and never when NO_COLOR is set (https://no-color.org);
 * results on stdout, messages on stderr, so `id=$(casebridge cycle start)` captures only the id.
 */

export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Whether stdout is a terminal. */
  tty: boolean;
  /** Whether stderr is a terminal (progress bars go there). */
  errTty: boolean;
}

export function processIo(): Io {
  return {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    cwd: process.cwd(),
    env: process.env,
    tty: Boolean(process.stdout.isTTY),
    errTty: Boolean(process.stderr.isTTY) && !process.env.CI,
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
