import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The code map of the README ("Code map"), checked: each file's layer, the layers it may import, and no cycle with
// type imports counted (a type-only cycle still ties the files together for a reader, and for the build of types).

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../src');

type Layer =
  | 'store'
  | 'behaviour'
  | 'service'
  | 'jira'
  | 'rules'
  | 'seed'
  | 'kernel'
  | 'openapi'
  | 'handlers'
  | 'steps'
  | 'ui'
  | 'own'
  | 'request'
  | 'server'
  | 'top';

/** The model's folders, lowest first: each imports the ones before it (store/ and behaviour/ only themselves). */
const MODEL: Layer[] = ['store', 'behaviour', 'service', 'jira', 'rules', 'seed'];
const BELOW_STEPS: Layer[] = [...MODEL, 'kernel', 'handlers', 'steps'];
const BELOW_REQUEST: Layer[] = [...BELOW_STEPS, 'openapi', 'ui', 'own'];
const MAY_IMPORT: Record<Layer, Layer[]> = {
  store: ['store'],
  behaviour: ['behaviour'],
  service: ['store', 'behaviour', 'service'],
  jira: ['store', 'behaviour', 'service', 'jira'],
  rules: ['store', 'behaviour', 'service', 'jira', 'rules'],
  seed: MODEL,
  kernel: [...MODEL, 'kernel'],
  openapi: [...MODEL, 'openapi'],
  handlers: [...MODEL, 'kernel', 'handlers'],
  steps: BELOW_STEPS,
  ui: [...MODEL, 'kernel', 'ui'],
  own: [...MODEL, 'kernel', 'openapi'],
  request: [...BELOW_REQUEST, 'request'],
  server: [...BELOW_REQUEST, 'request'],
  // The entries: cli.ts reads its arguments with cli-options.ts.
  top: [...BELOW_REQUEST, 'request', 'server', 'top'],
};

/** The layer of a file, by its path under src/ (posix). */
function layerOf(file: string): Layer {
  if (file === 'pipeline/index.ts') return 'request';
  const folder = file.includes('/') ? file.slice(0, file.indexOf('/')) : '';
  const byFolder: Record<string, Layer> = {
    store: 'store',
    behaviour: 'behaviour',
    service: 'service',
    jira: 'jira',
    rules: 'rules',
    seed: 'seed',
    kernel: 'kernel',
    openapi: 'openapi',
    handlers: 'handlers',
    pipeline: 'steps',
    ui: 'ui',
  };
  if (folder) {
    const layer = byFolder[folder];
    if (!layer) throw new Error(`src/${folder}/ has no layer: add it to the code map (README) and to this test`);
    return layer;
  }
  if (file === 'admin.ts' || file === 'docs.ts') return 'own';
  if (file === 'server.ts') return 'server';
  if (file === 'index.ts' || file === 'cli.ts' || file === 'cli-options.ts') return 'top';
  throw new Error(
    `src/${file} has no layer: the top of src/ holds only the entries (and cli-options.ts), server.ts, admin.ts and docs.ts`,
  );
}

/** The relative imports and re-exports of each file, type-only ones included, as paths under src/. */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split('\\').join('/'));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(join(SRC, file), 'utf8');
    const targets = [...text.matchAll(/\bfrom\s+'(\.{1,2}\/[^']+)'/g)].map((m) =>
      posix.normalize(posix.join(posix.dirname(file), m[1]!)).replace(/\.js$/, '.ts'),
    );
    graph.set(file, targets);
  }
  return graph;
}

/** Imports that go to a layer the importer may not import. */
function forbiddenImports(graph: Map<string, string[]>): string[] {
  const bad: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const from = layerOf(file);
      const to = layerOf(target);
      if (!MAY_IMPORT[from].includes(to)) bad.push(`${file} (${from}) imports ${target} (${to})`);
    }
  }
  return bad;
}

/** One import cycle, as the files around it, or undefined when there is none. */
function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): string[] | undefined => {
    if (state.get(file) === 'done') return undefined;
    if (state.get(file) === 'open') return [...path.slice(path.indexOf(file)), file];
    state.set(file, 'open');
    path.push(file);
    for (const target of graph.get(file) ?? []) {
      const cycle = visit(target);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(file, 'done');
    return undefined;
  };
  for (const file of graph.keys()) {
    const cycle = visit(file);
    if (cycle) return cycle;
  }
  return undefined;
}

describe('code map', () => {
  const graph = importGraph();

  it('reads the imports of every source file', () => {
    expect(graph.size).toBeGreaterThan(50);
    for (const targets of graph.values()) for (const t of targets) expect(graph.has(t), t).toBe(true);
  });

  it('every import goes to the same layer or one below', () => {
    expect(forbiddenImports(graph)).toEqual([]);
  });

  it('has no import cycle, type imports counted', () => {
    expect(findCycle(graph)).toBeUndefined();
  });

  it('refuses an import upwards and a cycle', () => {
    const bad = new Map(graph);
    bad.set('store/store.ts', [...(graph.get('store/store.ts') ?? []), 'kernel/exchange.ts']);
    expect(forbiddenImports(bad)).toEqual(['store/store.ts (store) imports kernel/exchange.ts (kernel)']);
    expect(findCycle(bad)).toEqual(expect.arrayContaining(['store/store.ts', 'kernel/exchange.ts']));
  });

  it('orders the model: a folder imports only the ones below it, never one beside it', () => {
    const bad = new Map(graph);
    bad.set('store/blobs.ts', ['behaviour/profile.ts']);
    bad.set('jira/jql.ts', ['rules/domain.ts']);
    expect(forbiddenImports(bad)).toEqual(
      expect.arrayContaining([
        'store/blobs.ts (store) imports behaviour/profile.ts (behaviour)',
        'jira/jql.ts (jira) imports rules/domain.ts (rules)',
      ]),
    );
  });
});
