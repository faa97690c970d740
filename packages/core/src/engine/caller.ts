import type { TestManagementClient } from '../client/tm.js';

/** Runs calls for real, or (dry run) records what would be sent and answers with a stand-in. */
export interface Caller {
  readonly dryRun: boolean;
  readonly calls: string[];
  call<T>(name: string, input: unknown, send: () => Promise<T>, standIn: () => T): Promise<T>;
}

export function caller(dryRun: boolean, log: (line: string) => void): Caller {
  const calls: string[] = [];
  return {
    dryRun,
    calls,
    async call(name, input, send, standIn) {
      if (!dryRun) return send();
      const line = `${name} ${JSON.stringify(input, (k, v) => (k === 'data' ? '<bytes>' : v))}`;
      calls.push(line);
      log(`dry run: ${line}`);
      return standIn();
    },
  };
}

/** A read through `api`: in a dry run it is recorded and answers `standIn`. */
export function read<T>(api: Caller, name: string, input: unknown, send: () => Promise<T>, standIn: T): Promise<T> {
  return api.call(name, input, send, () => standIn);
}

/** A write through `api`: in a dry run it is recorded and nothing comes back. */
export async function write(api: Caller, name: string, input: unknown, send: () => Promise<unknown>): Promise<void> {
  await api.call(name, input, send, () => undefined);
}

/** What each part of delivery talks to the service with. */
export interface Service {
  readonly tm: TestManagementClient;
  readonly api: Caller;
  /** The options of every request: the run's abort signal. */
  readonly o: { signal?: AbortSignal };
}
