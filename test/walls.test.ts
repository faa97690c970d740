import { spawn } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The walls between folders are written in .dependency-cruiser.cjs and checked by `npm run lint`. This file proves
 * that they hold: the tree as it is breaks none, and a bad import is refused by the rule that names its wall. The
 * probes go into a scratch copy of packages/*\/src outside the repository, so the real tree is never written to.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEPCRUISE = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

type Dependency = { module: string; resolved: string; couldNotResolve: boolean; rules?: { name: string }[] };
type Result = {
  modules: { source: string; dependencies: Dependency[] }[];
  summary: {
    violations: { from: string; to: string; rule: { name: string }; cycle?: ({ name: string } | string)[] }[];
  };
};

/** depcruise's JSON answer over `args` from `cwd`, with the configuration found there. */
function depcruise(cwd: string, args: string[]): Promise<Result> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [DEPCRUISE, ...args, '--config', '.dependency-cruiser.cjs', '-T', 'json'], {
      cwd,
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b) => (out += b));
    child.stderr.on('data', (b) => (err += b));
    child.on('error', fail);
    child.on('close', (code) => {
      try {
        done(JSON.parse(out) as Result);
      } catch {
        fail(new Error(`depcruise exited with ${code}: ${err || out}`));
      }
    });
  });
}

/** file → the imports appended to it, each with the rules that must refuse it ([]: allowed). */
const PROBES: Record<string, [string, string[]][]> = {
  // The core's layers, lowest first: contract/ < client/, adapter/text.ts < engine/kernel/ < ... < engine/*.ts.
  'packages/core/src/engine/kernel/wall-probe.ts': [
    ['../delivery/cycles.js', ['core-layers']],
    ['../config/schema.js', ['core-layers']],
    ['../engine.js', ['core-layers']],
    ['../../adapter/index.js', ['core-layers']],
    ['../../runtime/channel.js', ['core-layers']],
    ['../../adapter/text.js', []],
    ['../../client/errors.js', []],
    ['./model.js', []],
  ],
  'packages/core/src/engine/config/wall-probe.ts': [
    ['../delivery/delivery.js', ['core-layers']],
    ['../report/summary.js', ['core-layers']],
    ['../kernel/work.js', []],
  ],
  'packages/core/src/engine/cases/wall-probe.ts': [
    ['../journal/store.js', ['core-layers']],
    ['../defects/defects.js', ['core-layers']],
    ['../jira/duplicate.js', []],
  ],
  'packages/core/src/engine/journal/wall-probe.ts': [
    ['../cases/registry.js', ['core-layers']],
    ['../kernel/model.js', []],
  ],
  'packages/core/src/engine/delivery/wall-probe.ts': [
    ['../report/links.js', ['core-layers']],
    ['../session.js', ['core-layers']],
    ['../defects/cap.js', []],
  ],
  'packages/core/src/engine/wall-probe.ts': [
    ['../runtime/channel.js', ['core-layers']],
    ['./report/run-summary.js', []],
  ],
  'packages/core/src/client/wall-probe.ts': [
    ['../engine/kernel/model.js', ['core-layers']],
    ['../adapter/text.js', ['core-layers']],
    ['../contract/index.js', []],
  ],
  'packages/core/src/adapter/text.ts': [['../contract/index.js', ['core-light-entries']]],
  'packages/core/src/contract/wall-probe.ts': [['../client/errors.js', ['core-layers']]],
  // A new room has its place in the table before it imports anything.
  'packages/core/src/engine/new-room/wall-probe.ts': [['../kernel/model.js', ['core-layers']]],
  // The adapter and runtime entries: Node's built-ins, and of the engine only its plain types and data.
  'packages/core/src/adapter/wall-probe.ts': [
    ['../engine/kernel/work.js', ['core-light-entries']],
    ['undici', ['core-light-entries']],
    ['../engine/kernel/model.js', []],
    ['./text.js', []],
  ],
  'packages/core/src/runtime/wall-probe.ts': [
    ['zod', ['core-light-entries']],
    ['../adapter/index.js', ['core-light-entries']],
    ['../engine/config/options.js', []],
  ],
  // The adapters: @casebridge/core, /adapter and /runtime, their runner, Node's built-ins.
  'packages/vitest/src/wall-probe.ts': [
    ['@casebridge/core/contract', ['adapters-use-core-entries']],
    ['@casebridge/core/internal', ['adapters-use-core-entries']],
    ['@casebridge/core/dist/index.js', ['not-to-unresolvable', 'adapters-use-core-entries']],
    ['../../core/src/client/errors.js', ['no-relative-across-packages', 'adapters-use-core-entries']],
    ['../../core/dist/index.js', ['no-relative-across-packages', 'adapters-use-core-entries']],
    ['undici', ['adapters-use-core-entries']],
    ['@casebridge/core', []],
    ['@casebridge/core/adapter', []],
    ['@casebridge/core/runtime', []],
    ['vitest', []],
    ['./translate.js', []],
  ],
  'packages/playwright/src/wall-probe.ts': [
    ['@casebridge/core/contract', ['adapters-use-core-entries']],
    ['p-queue', ['adapters-use-core-entries']],
    ['@playwright/test/reporter', []],
  ],
  'packages/jest/src/wall-probe.ts': [
    ['undici/lib/web/fetch/index.js', ['adapters-use-core-entries']],
    ['@casebridge/emulator', ['adapters-use-core-entries']],
  ],
  // The CLI: the other packages' entries only.
  'packages/cli/src/commands/wall-probe.ts': [
    ['@casebridge/core/dist/internal.js', ['not-to-unresolvable']],
    ['../../../core/src/engine/cases/registry.js', ['no-relative-across-packages', 'cli-uses-entries']],
    ['@casebridge/core/contract', ['cli-uses-entries']],
    ['@casebridge/core/internal', []],
    ['@casebridge/emulator', []],
    ['../output.js', []],
  ],
  // The emulator: built from the contract only, and its code map (packages/emulator/README.md) layer by layer.
  'packages/emulator/src/store/wall-probe.ts': [
    ['../behaviour/profile.js', ['emulator-layers']],
    ['@casebridge/core', ['emulator-contract-only']],
    ['../../../core/src/engine/engine.js', ['no-relative-across-packages', 'emulator-contract-only']],
    ['@casebridge/core/contract', []],
    ['./blobs.js', []],
  ],
  'packages/emulator/src/jira/wall-probe.ts': [
    ['../rules/domain.js', ['emulator-layers']],
    ['../service/router.js', []],
  ],
  'packages/emulator/src/kernel/wall-probe.ts': [
    ['../pipeline/reply.js', ['emulator-layers']],
    ['../handlers/cases.js', ['emulator-layers']],
    ['../admin.js', ['emulator-layers']],
    ['@casebridge/core/internal', ['emulator-contract-only']],
    ['../store/store.js', []],
    ['./exchange.js', []],
  ],
  'packages/emulator/src/handlers/wall-probe.ts': [
    ['../ui/view.js', ['emulator-layers']],
    ['../openapi/document.js', ['emulator-layers']],
    ['../kernel/send.js', []],
    ['./cases.js', []],
  ],
  'packages/emulator/src/openapi/wall-probe.ts': [
    ['../kernel/exchange.js', ['emulator-layers']],
    ['../service/router.js', []],
  ],
  'packages/emulator/src/pipeline/wall-probe.ts': [
    ['./index.js', ['emulator-layers']],
    ['../ui/index.js', ['emulator-layers']],
    ['../admin.js', ['emulator-layers']],
    ['../handlers/index.js', []],
    ['./reply.js', []],
  ],
  'packages/emulator/src/pipeline/index.ts': [
    ['../server.js', ['emulator-layers', 'no-circular']], // server.ts imports pipeline/index.ts
    ['../admin.js', []],
    ['../ui/index.js', []],
  ],
  'packages/emulator/src/ui/wall-probe.ts': [
    ['../pipeline/index.js', ['emulator-layers']],
    ['../handlers/cases.js', ['emulator-layers']],
    ['../docs.js', ['emulator-layers']],
    ['../kernel/send.js', []],
  ],
  'packages/emulator/src/admin.ts': [
    ['./ui/index.js', ['emulator-layers']],
    ['./docs.js', ['emulator-layers']],
    ['./openapi/document.js', []],
  ],
  'packages/emulator/src/server.ts': [
    ['./index.js', ['emulator-layers', 'no-circular']], // index.ts imports server.ts
    ['./ui/index.js', []],
  ],
  // The top of the emulator's src/ holds the entries, server.ts, admin.ts and docs.ts: the rest goes in a folder.
  'packages/emulator/src/wall-probe.ts': [['./store/store.js', ['emulator-layers']]],
  // A cycle held together by `import type` alone is still a cycle, inside one layer too.
  'packages/core/src/engine/kernel/wall-cycle-a.ts': [['./wall-cycle-b.js', ['no-circular']]],
  'packages/core/src/engine/kernel/wall-cycle-b.ts': [['./wall-cycle-a.js', ['no-circular']]],
};

let scratch: string;
let probed: Result;
let tree: Result;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'cb-walls-'));
  for (const pkg of readdirSync(join(ROOT, 'packages'))) {
    cpSync(join(ROOT, 'packages', pkg, 'src'), join(scratch, 'packages', pkg, 'src'), { recursive: true });
    cpSync(join(ROOT, 'packages', pkg, 'package.json'), join(scratch, 'packages', pkg, 'package.json'));
  }
  for (const file of ['.dependency-cruiser.cjs', 'tsconfig.json', 'package.json']) {
    cpSync(join(ROOT, file), join(scratch, file));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(scratch, 'node_modules'), 'junction');
  mkdirSync(join(scratch, 'packages/core/dist'));
  writeFileSync(join(scratch, 'packages/core/dist/index.js'), 'export {};\n'); // a build, for a probe to land on
  for (const [file, imports] of Object.entries(PROBES)) {
    mkdirSync(join(scratch, dirname(file)), { recursive: true });
    // Type-only re-exports: a wall holds for types too (appended to a file that exists, as a new import of it).
    const lines = imports.map(([spec], i) => `export type { WallProbe${i} } from '${spec}';\n`);
    appendFileSync(join(scratch, file), `\n${lines.join('')}`);
  }
  // The real tree, as `npm run lint` cruises it, beside the scratch copy (two cores).
  [probed, tree] = await Promise.all([
    depcruise(scratch, ['packages/*/src']),
    depcruise(ROOT, ['packages/*/src', 'packages/*/test', 'test', 'examples']),
  ]);
}, 60_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the walls hold', () => {
  it('the tree as it is breaks none (npm run lint)', () => {
    expect(tree.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)).toEqual([]);
    expect(tree.modules.length).toBeGreaterThan(300);
  });

  it('the scratch copy breaks none but the probes', () => {
    const files = Object.keys(PROBES);
    const byProbe = (v: Result['summary']['violations'][number]) =>
      [v.from, ...(v.cycle ?? []).map((c) => (typeof c === 'string' ? c : c.name))].some((f) => files.includes(f));
    const others = probed.summary.violations.filter((v) => !byProbe(v));
    expect(others.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)).toEqual([]);
  });

  for (const [file, imports] of Object.entries(PROBES)) {
    const says = imports.map(
      ([spec, rules]) => `${spec} ${rules.length ? `refused (${rules.join(', ')})` : 'allowed'}`,
    );
    it(`${file}: ${says.join('; ')}`, () => {
      const deps = probed.modules.find((m) => m.source === file)?.dependencies ?? [];
      const got = imports.map(([spec]) => {
        const dep = deps.find((d) => d.module === spec);
        if (!dep) return ['(not seen)'];
        // An allowed probe proves something only when it lands on a file.
        if (dep.couldNotResolve && !dep.rules?.length) return ['(unresolved)'];
        // core-layers:engine/kernel/ and the like: the wall, without the place.
        return (dep.rules ?? []).map((r) => r.name.replace(/:.*/, '')).sort();
      });
      expect(got).toEqual(imports.map(([, rules]) => [...rules].sort()));
    });
  }
});

describe('a refusal says which wall and how to mend it', () => {
  it('each rule has a comment, which npm run lint prints under a violation', () => {
    const { forbidden } = createRequire(import.meta.url)('../.dependency-cruiser.cjs') as {
      forbidden: { name: string; comment?: string }[];
    };
    expect(forbidden.filter((r) => !r.comment).map((r) => r.name)).toEqual([]);
    const kernel = probed.summary.violations.find((v) => v.from === 'packages/core/src/engine/kernel/wall-probe.ts');
    expect(kernel?.rule.name).toBe('core-layers:engine/kernel/');
    expect(forbidden.find((r) => r.name === kernel?.rule.name)?.comment).toMatch(
      /^engine\/kernel\/ imports, of packages\/core\/src\/, only itself and contract\/, client\/, adapter\/text\.ts\. .*Move the shared code down/,
    );
  });
});
