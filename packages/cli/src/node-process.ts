import { spawn } from 'node:child_process';

/** How a child Node process ended, with what it printed. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
  timedOut: boolean;
}

/**
 * Runs `node <args>` in `dir` (a runner's command-line file, a small script) and collects its output. Never rejects:
 * a process that cannot start ends with code null and the reason in `err`. stderr is kept up to 64 KiB (enough for
 * the first error; a runner stuck in a loop of warnings must not fill the memory). With `timeoutMs`, a process
 * still running then is killed and marked `timedOut`.
 */
export function runNode(dir: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs?: number): Promise<Exit> {
  return new Promise((done) => {
    const child = spawn(process.execPath, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      if (err.length < 65_536) err += d.toString();
    });
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            child.kill('SIGKILL');
          }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      done({ code: null, signal: null, out, err: `${err}\n${e.message}`, timedOut });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, out, err, timedOut });
    });
  });
}
