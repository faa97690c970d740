import { operation, type SchemaMode } from '@casebridge/core/contract';
import { afterAll, beforeAll, expect } from 'vitest';
import { type EmulatorOptions, type RunningEmulator, startEmulator } from '../src/index.js';

/**
 * Test helpers: a real emulator on port 0 and a raw HTTP caller (tests of the emulator do not use casebridge's
 * client: they check the wire).
 */

export const TM = '/rest/synapse/latest/public';
export const TM_ALIAS = '/rest/svc/latest/public';
export const REPO = '/edu-sharing/rest';
export const REPO_ALIAS = '/repo/rest';

export const ADMIN = { user: 'admin', password: 'admin' };
export const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body, or undefined when the body is empty or not JSON. */
  json: any;
}

export interface CallOptions {
  body?: unknown;
  query?: Record<string, string | number>;
  /** Authorization header value; default Basic admin:admin; null sends none. */
  auth?: string | null;
  headers?: Record<string, string>;
  /** Raw body (sent as is). */
  raw?: RequestInit['body'];
}

/** Calls the emulator. `path` is the full path (prefix included) with segments already encoded. */
export async function call(
  emu: RunningEmulator,
  method: string,
  path: string,
  o: CallOptions = {},
): Promise<CallResult> {
  const url = new URL(emu.url + path);
  for (const [k, v] of Object.entries(o.query ?? {})) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { accept: 'application/json', ...o.headers };
  const auth = o.auth === undefined ? basic(ADMIN.user, ADMIN.password) : o.auth;
  if (auth !== null) headers.authorization = auth;
  let body: RequestInit['body'] = o.raw;
  if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Starts one emulator for the file's tests (fresh demo state per file); `get()` returns it. */
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

/**
 * Asserts that `body` matches the documented response of `opId` in the wire mode of the variant, and that the
 * tolerant (client) schema accepts it too. Returns the tolerant (normalised) parse.
 */
export function expectShape(opId: string, mode: Exclude<SchemaMode, 'tolerant'>, body: unknown): any {
  const op = operation(opId);
  if (!op.response) throw new Error(`${opId} documents no response body`);
  const wire = op.response(mode).safeParse(body);
  expect(wire.error?.issues ?? [], `${opId} (${mode}) wire shape`).toEqual([]);
  const tolerant = op.response('tolerant').safeParse(body);
  expect(tolerant.error?.issues ?? [], `${opId} tolerant shape`).toEqual([]);
  // The `ID` variant never spells identifiers `id` on documented id-or-ID entities, and vice versa.
  return tolerant.data;
}

/** Every key used anywhere in a JSON value (to check id/ID spelling). */
export function allKeys(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) allKeys(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.add(k);
      allKeys(v, out);
    }
  }
  return out;
}

export const enc = encodeURIComponent;
