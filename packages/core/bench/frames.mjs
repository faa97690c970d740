// How deep one passing result's delivery goes: the frames on the stack when the built engine opens the request
// that sends its status (the cycle's bulkStatusUpdate), against the real emulator in process on port 0.
//
// Two paths are measured, each the chain of functions from its origin to the socket (the core's call into undici,
// caught at `undici:request:create`; until 945573c, `http.request`; undici's and Node's own frames past that point
// are not counted), stitched across awaits and `.then`s (Error.stackTraceLimit = Infinity, async hooks; see
// causalStack), each function counted once, named through the build's source maps; the runtime's own timer and
// microtask frames are left out:
// - `timer`: two tests planned, one reports; its status waits in the batch and the batch's timer sends it (the
//   30 s wait is shortened to 5 ms here, nothing else changes);
// - `add`: one test planned; it reports, and being the last planned test it sends the batch from `engine.add`.
//
// Measured with this script at each step:
// - 91fc1b4 (Bulk calling back into Engine, withCycleOpen and orIfMissing wrapped by hand):
//   batch timer -> socket: 26 frames (16 in src/engine); engine.add -> socket: 28 frames (18 in src/engine)
// - 6079c80 (one DeliveryPipeline owning batch, timers, slots and `done`; the service decorated once in the session):
//   batch timer -> socket: 22 frames (12 in src/engine, 10 in the client); engine.add -> socket: 23 (13 in src/engine)
// - then (the session's health counting and the service decorator are rules run in one function per operation,
//   client/operations.ts; a group method is `call` bound to its operation, not an arrow forwarding to it; the
//   queue's task is bound, not an arrow; pacing and the exchange are one method):
//   batch timer -> socket: 18 frames (10 in src/engine, 8 in the client); engine.add -> socket: 19 (11 in src/engine)
// - then (splitBatch one loop over a stack of parts, not walk and attempt; a bulk's writes sent from Delivery.bulk in
//   the runs' turn, not through inRunOrder's callback and BulkStatuses.send; the split's send sendOne bound):
//   batch timer -> socket: 13 frames (5 in src/engine, 8 in the client); engine.add -> socket: 14 (6 in src/engine)
// - then (the transport takes a slot of p-queue and sends the request itself, where p-queue ran it as a task: the
//   queue still decides when a request goes, and its add, #tryToStartAnother and run are off the way to the socket):
//   batch timer -> socket: 10 frames (5 in src/engine, 5 in the client); engine.add -> socket: 11 (6 in src/engine)
// - 214323f (the pipeline's delivery slots are a p-queue, which runs the bulk as its task; the runs' turn is
//   RunOrder.withTurn; Engine.add hands the result to DeliveryPipeline.add):
//   batch timer -> socket: 14 frames (6 in src/engine, 3 in p-queue, 5 in the client); engine.add -> socket: 16
//   (8 in src/engine)
// - 945573c (undici alone, counted at `undici:request:create` from here on): the same 14 and 16, the client's 5 the
//   same functions (the old hook on the commit before, the new one on 945573c).
// The 14: the pipeline's flush, p-queue's add, #tryToStartAnother and run (a delivery slot), sendBulk (the batch and
// its timers; what became of each result), Delivery.bulk (the statuses wanted, one split bulk per status) and
// RunOrder.withTurn (the runs' turn), splitBatch, BulkStatuses.sendOne (a bulk update, or one run update per run where
// the service has none); the rules (operations.ts: health, optional routes, a cycle reopened),
// TestManagementClient.call (contract, auth, answer), Transport.send (retries, the slot), Transport.exchange (pacing,
// one exchange, the answer read) and the connection's exchange (undici's dispatcher, its pool and timeouts).
// Anonymous functions are not counted (Node prints them `<anonymous>` with source maps, left out with the
// built-ins): on the timer path the timer's callback (until 945573c also the connection's promise executor; before
// the turn, the arrow handed to inRunOrder; before the slot, p-queue's executor): 22 before, 12 after, counted with
// them.
//
// Run: npm run build -w packages/core && node packages/core/bench/frames.mjs [path/to/core/dist] [--stacks]

import { AsyncLocalStorage, createHook, executionAsyncId } from 'node:async_hooks';
import { subscribe } from 'node:diagnostics_channel';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startEmulator } from '@casebridge/emulator';

Error.stackTraceLimit = Number.POSITIVE_INFINITY;
// Frames name the source files (src/client/..., src/engine/...), through the build's source maps.
process.setSourceMapsEnabled(true);
const args = process.argv.slice(2);
const showStacks = args.includes('--stacks');
const dist = resolve(args.find((a) => !a.startsWith('--')) ?? new URL('../dist', import.meta.url).pathname);

/** Where a request came from: the timer callback or `engine.add` that started its chain. */
const origin = new AsyncLocalStorage();
const captured = [];

/**
 * V8's async stack trace stops at the first promise that is not awaited by an async function (a `.then`, a queue):
 * the causal chain is stitched instead. Each async resource (a promise, a timer) records the context that made it
 * and the stack at that moment; at the socket the chain is walked back to its origin, and the frames met on the way
 * are counted once each (a frame seen at several hops is one frame the result went through).
 */
const made = new Map();
let recording = false;
createHook({
  init(id, type) {
    if (recording) made.set(id, { ctx: executionAsyncId(), type, stack: new Error('made').stack });
  },
}).enable();

/** The stack at the socket and at every resource back to the origin, joined (newest first). */
function causalStack() {
  const parts = [new Error('socket').stack];
  for (let id = executionAsyncId(), hops = 0; made.has(id) && hops < 10_000; hops++) {
    const r = made.get(id);
    parts.push(r.stack);
    id = r.ctx;
  }
  return parts.join('\n');
}

// The socket: undici publishes every request on `undici:request:create` as it builds it (`new Request`, in the same
// turn as the core's `dispatcher.request`, before a socket is picked or opened). undici's own frames on the way there
// (Agent, Pool, Client dispatch) are left out like Node's were, so the count ends at the core's call into undici.
subscribe('undici:request:create', ({ request }) => {
  captured.push({ url: `${request.origin}${request.path}`, origin: origin.getStore(), stack: causalStack() });
});

// The batch's timer: its 30 s wait is shortened (the client's own 30 s headers timeout is left as it is); every
// timer callback runs as the origin `timer`.
const realSetTimeout = globalThis.setTimeout;
globalThis.setTimeout = function setTimeout(fn, ms, ...rest) {
  const client = ms === 30_000 && /undici|exchange|Transport/.test(new Error().stack);
  const wait = ms === 30_000 && !client ? 5 : ms;
  return realSetTimeout((...x) => origin.run(`timer:${ms}`, () => fn(...x)), wait, ...rest);
};

const { Engine } = await import(pathToFileURL(join(dist, 'index.js')).href);
const emu = await startEmulator({ port: 0, profile: 'ideal' });

const planned = (key) => ({ id: key, file: 't.spec.ts', titlePath: [`${key} passes`], tags: [], annotations: [] });
const passing = (key) => ({
  ...planned(key),
  attempts: [{ retry: 0, status: 'passed', durationMs: 5, errors: [], steps: [], attachments: [] }],
});

/** Runs one result through an engine; returns the frames of the bulk status update's request. */
async function measure(name, plan) {
  captured.length = 0;
  const cwd = mkdtempSync(join(tmpdir(), 'cb-frames-'));
  const lines = [];
  const engine = Engine.create(
    {
      url: emu.url,
      token: 'casebridge-dev-token',
      projectKey: 'DEMO',
      mode: 'cycle',
      testPlan: 'DEMO-1',
      cycle: `frames ${name}`,
    },
    { cwd, runner: { name: 'playwright', version: 'bench' }, env: {}, out: (t) => lines.push(t) },
  );
  engine.begin({ tests: plan.map(planned) });
  // The cycle is prepared before the result arrives (as while a suite runs): only the status goes in the batch.
  await new Promise((r) => realSetTimeout(r, 300));
  recording = true;
  origin.run('add', () => engine.add(passing(plan[0])));
  for (let i = 0; i < 300 && !captured.some((c) => c.url.includes('bulkStatusUpdate')); i++) {
    await new Promise((r) => realSetTimeout(r, 20));
  }
  const hit = captured.find((c) => c.url.includes('bulkStatusUpdate'));
  recording = false;
  made.clear();
  const end = await engine.end();
  if (!hit || end.summary.delivered !== 1)
    throw new Error(`${name}: not delivered (${!!hit}, ${end.summary.delivered}):\n${lines.join('\n')}`);
  return hit;
}

/**
 * The distinct functions between the origin and the socket: from the timer callback (or `engine.add`) to the call
 * that opens the request, without this script's own frames, the runtime's scheduling, built-ins and the async hook.
 * A function met at several hops (resumed after an await) is one frame; an anonymous one counts by its place.
 */
function frames(stack, origin) {
  const seen = new Map();
  for (const raw of stack.split('\n')) {
    const l = raw.trim();
    if (!l.startsWith('at ')) continue;
    if (origin === 'timer' && /^at setTimeout /.test(l)) break;
    if (/node:internal|processTicksAndRejections|listOnTimeout|processTimers|AsyncHook|emitInit|<anonymous>/.test(l))
      continue;
    if (l.includes('bench/frames.mjs') || l.includes('async_hooks') || l.includes('node:diagnostics_channel')) continue;
    // undici's own frames, from its `request` to `new Request`: past the socket's edge, as Node's were.
    if (l.includes('node_modules/undici/')) continue;
    const frame = l.replace(/^at (async )?/, '');
    const named = / \(/.test(frame) ? frame.slice(0, frame.indexOf(' (')) : frame;
    const file = /(src\/[^:)]+|node_modules\/[^/]+)/.exec(frame)?.[1] ?? '?';
    if (!seen.has(`${named} ${file}`)) seen.set(`${named} ${file}`, { name: named, file });
    if (origin === 'add' && /Engine\.add$/.test(named)) break;
  }
  return [...seen.values()];
}

try {
  const timer = await measure('timer', ['DEMO-2', 'DEMO-3']);
  const add = await measure('add', ['DEMO-4']);
  if (!timer.origin?.startsWith('timer:30000'))
    throw new Error(`timer: sent from ${timer.origin}, not the batch timer`);
  if (add.origin !== 'add') throw new Error(`add: sent from ${add.origin}, not engine.add`);
  const t = frames(timer.stack, 'timer');
  const a = frames(add.stack, 'add');
  // Where the frames are: the engine, a bundled library (p-queue running a task), the rest in the client.
  const where = (f) => {
    const libraries = new Map();
    for (const x of f.filter((x) => x.file.startsWith('node_modules/'))) {
      const name = x.file.slice('node_modules/'.length);
      libraries.set(name, (libraries.get(name) ?? 0) + 1);
    }
    const engine = f.filter((x) => x.file.startsWith('src/engine')).length;
    const libs = [...libraries].map(([name, n]) => `${n} in ${name}, `).join('');
    return `${f.length} frames (${engine} in src/engine, ${libs}the rest in the client)`;
  };
  console.log(`batch timer -> socket: ${where(t)}`);
  console.log(`engine.add  -> socket: ${where(a)}`);
  const list = (f) => f.map((x) => `  ${x.name}  ${x.file}`).join('\n');
  if (showStacks) console.log(`\ntimer (socket first):\n${list(t)}\n\nadd (socket first):\n${list(a)}`);
} finally {
  await emu.close();
}
