import { createServer, type Server as NetServer, type Socket } from 'node:net';
import {
  type EmulatorOptions,
  type FaultRuleInput,
  type RequestLogEntry,
  type RunningEmulator,
  startEmulator,
} from '@casebridge/emulator';
import { afterAll, afterEach, beforeAll } from 'vitest';

/**
 * Client tests run against a real emulator on port 0 and script its faults through its admin endpoints, over HTTP,
 * as an operator would. Nothing of the client is replaced.
 */

export const ADMIN = { type: 'basic', username: 'admin', password: 'admin' } as const;

/** Starts one emulator for the file's tests; the returned function gives it. */
export function useEmulator(options: EmulatorOptions = {}): () => RunningEmulator {
  let emu: RunningEmulator | undefined;
  beforeAll(async () => {
    emu = await startEmulator({ port: 0, ...options });
  });
  afterAll(async () => {
    await emu?.close();
  });
  return () => {
    if (!emu) throw new Error('emulator not started');
    return emu;
  };
}

async function admin(emu: RunningEmulator, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${emu.url}/__emulator/${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`admin ${method} ${path}: HTTP ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Replaces the emulator's fault rules. */
export async function setFaults(emu: RunningEmulator, rules: FaultRuleInput[], seed?: number): Promise<void> {
  await admin(emu, 'PUT', 'faults', seed === undefined ? rules : { rules, seed });
}

export async function clearFaults(emu: RunningEmulator): Promise<void> {
  await admin(emu, 'DELETE', 'faults');
}

/** The emulator's request log (admin requests excluded), oldest first. */
export async function requestLog(emu: RunningEmulator): Promise<RequestLogEntry[]> {
  return (await admin(emu, 'GET', 'requests')) as RequestLogEntry[];
}

export async function clearRequestLog(emu: RunningEmulator): Promise<void> {
  await admin(emu, 'DELETE', 'requests');
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A server that accepts connections and never answers (a Jira behind a hung proxy), listening for the tests of the
 * calling `describe`: `url()` gives its address; its connections and the server end after each test.
 */
export function useSilentServer(): { url: () => Promise<string> } {
  let server: NetServer | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    const s = server;
    server = undefined;
    if (s) await new Promise((done) => s.close(done));
  });
  return {
    async url() {
      const s = createServer((socket) => sockets.push(socket));
      server = s;
      await new Promise<void>((done) => s.listen(0, '127.0.0.1', done));
      return `http://127.0.0.1:${(s.address() as { port: number }).port}`;
    },
  };
}

/** The largest number of log entries being served at the same instant (each shrunk by `slackMs` at both ends). */
export function maxOverlap(entries: readonly RequestLogEntry[], slackMs = 2): number {
  const events: [number, number][] = [];
  for (const e of entries) {
    const start = e.at + slackMs;
    const end = e.at + e.ms - slackMs;
    if (end <= start) continue;
    events.push([start, 1], [end, -1]);
  }
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let max = 0;
  for (const [, delta] of events) {
    now += delta;
    max = Math.max(max, now);
  }
  return max;
}

/**
 * An issue put straight into the emulator's store, as another machine or a person made it outside this run: the key
 * given (far above the project's counter, so the service's own creates never meet it), no request logged.
 */
export function insertIssue(
  emu: RunningEmulator,
  i: {
    project: string;
    key: string;
    type: string;
    summary: string;
    description?: string;
    status?: string;
    at?: number;
  },
) {
  const p = emu.store.projects.find((x) => x.key === i.project);
  const at = i.at ?? Date.now();
  return emu.store.issues.insert({
    key: i.key,
    projectId: p?.id as number,
    type: i.type,
    summary: i.summary,
    description: i.description ?? '',
    status: i.status ?? 'Open',
    resolution: null,
    labels: [],
    reporter: 'ci',
    created: at,
    updated: at,
    automationReference: null,
  });
}
