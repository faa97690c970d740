#!/usr/bin/env node
/**
 * The walls between folders, in one place (issue 40): which folder of packages/core and packages/emulator may import
 * which. Biome enforces them (`noRestrictedImports` overrides); this table generates those overrides into
 * packages/core/biome.json and packages/emulator/biome.json, and test/walls.test.ts reads the same table for its
 * layer check over resolved paths and fails when a biome.json was edited by hand (drift).
 *
 *   node walls.mjs --write    regenerate both biome.json files after changing this table
 *   node walls.mjs --check    exit 1 when a biome.json differs from what this table makes
 *
 * The adapters' and the CLI's walls (which packages they may import) are in the root biome.json: they name packages,
 * not folders.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = dirname(fileURLToPath(import.meta.url));

// ---------------------------------------------------------------------------------------------------------------
// The core: engine rooms, lowest first. A room imports the rooms below it, never one above it or beside it.
// ---------------------------------------------------------------------------------------------------------------

export const CORE_ROOMS = [
  ['kernel'],
  ['config'],
  ['jira'],
  ['cases', 'journal'],
  ['defects'],
  ['delivery'],
  ['report'],
  ['query'],
];
/** Below every room: the contract, the typed clients, and adapter/text.ts, which the engine shares with the adapter entry. */
export const CORE_GROUND = ['contract', 'client', 'adapter/text'];

const ADAPTER_SHARED =
  'nor src/adapter/ (but adapter/text.js, which it shares with the adapter entry) nor src/runtime/';
const order = () => `${CORE_ROOMS.map((layer) => layer.join(', ')).join(' < ')} < the files at the top of engine/`;

/** What each place under packages/core/src may import besides itself (entries: index.ts and internal.ts). */
export function coreDeps() {
  const deps = {
    contract: [],
    'adapter/text': [],
    client: ['contract'],
    // The entries adapters and test files load reach the engine for plain types only.
    adapter: ['adapter/text', 'engine/kernel'],
    runtime: ['engine/kernel', 'engine/config'],
  };
  const layers = [...CORE_ROOMS.map((l) => l.map((r) => `engine/${r}`)), ['engine']];
  layers.forEach((layer, i) => {
    for (const room of layer) deps[room] = [...CORE_GROUND, ...layers.slice(0, i).flat()];
  });
  deps.entries = Object.keys(deps);
  return deps;
}

const wall = (includes, patterns, paths) => ({
  includes,
  linter: {
    rules: {
      style: {
        noRestrictedImports: { level: 'error', options: { ...(paths ? { paths } : {}), patterns } },
      },
    },
  },
});

const ENTRY_PATHS = Object.fromEntries(
  ['undici', 'p-queue', 'zod'].map((p) => [
    p,
    `${p} loads the HTTP stack; the adapter and runtime entries hold Node built-ins only (test/entries/adapter-entry.test.ts).`,
  ]),
);

export function coreOverrides() {
  const rooms = CORE_ROOMS.flatMap((layer, i) =>
    layer.map((room) => {
      const above = [...layer.filter((r) => r !== room), ...CORE_ROOMS.slice(i + 1).flat()];
      const names = [...above.map((r) => `${r}/`), 'the top files'].join(', ');
      return wall(
        [`src/engine/${room}/**`],
        [
          {
            group: [...above.map((r) => `**/${r}/**`), '../*', '**/adapter/**', '!**/adapter/text.js', '**/runtime/**'],
            message: `engine/${room}/ imports no room above it or beside it (${names}), ${ADAPTER_SHARED}. Rooms, lowest first: ${order()}. Move the shared code down, or pass it in.`,
          },
        ],
      );
    }),
  );
  return [
    ...rooms,
    wall(
      ['src/engine/*.ts'],
      [
        {
          group: ['**/adapter/**', '!**/adapter/text.js', '**/runtime/**'],
          message:
            'The engine imports src/adapter/ (but adapter/text.js, which it shares with the adapter entry) nor src/runtime/: move what both need into engine/kernel/.',
        },
      ],
    ),
    wall(
      ['src/client/**'],
      [
        {
          group: ['**/engine/**', '**/adapter/**', '**/runtime/**'],
          message:
            'src/client/ sits below the engine: it imports src/contract/ and nothing from engine/, adapter/ or runtime/.',
        },
      ],
    ),
    wall(
      ['src/contract/**'],
      [
        {
          group: ['**/client/**', '**/engine/**', '**/adapter/**', '**/runtime/**'],
          message: 'src/contract/ is the lowest layer: it imports nothing from client/, engine/, adapter/ or runtime/.',
        },
      ],
    ),
    wall(
      ['src/adapter/**', 'src/runtime/**'],
      [
        {
          group: ['../**', '!../engine/kernel/model.js', '!../engine/kernel/types.js', '!../engine/config/options.js'],
          message:
            'The adapter and runtime entries reach into the rest of the core only for engine/kernel/model.js, engine/kernel/types.js and engine/config/options.js (types and plain data), so a test file that imports them loads no engine.',
        },
      ],
      ENTRY_PATHS,
    ),
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// The emulator: built from the contract only; its own layers (packages/emulator/README.md, "Code map").
// ---------------------------------------------------------------------------------------------------------------

export const EMULATOR_CONTRACT_ONLY = {
  group: ['@casebridge/core', '@casebridge/core/**', '!@casebridge/core/contract', '**/core/src/**', '**/core/dist/**'],
  message:
    "The emulator is built from the contract only (@casebridge/core/contract), never from the core's engine or client, so it cannot agree with a bug in them.",
};

/** The emulator's walls: its own layers (packages/emulator/README.md, "Code map"). Every folder also gets EMULATOR_CONTRACT_ONLY. */
export const EMULATOR_WALLS = [
  {
    includes: ['src/*.ts', '!src/admin.ts', '!src/docs.ts', '!src/server.ts', '!src/index.ts', '!src/cli.ts'],
    forbid: [
      './kernel/**',
      './handlers/**',
      './openapi/**',
      './pipeline/**',
      './ui/**',
      './admin.js',
      './docs.js',
      './server.js',
      './index.js',
      './cli.js',
    ],
    message:
      "The top of src/ holds the entries (index.ts, cli.ts), server.ts and the own endpoints admin.ts and docs.ts; any other file belongs in a folder, and until it is moved there it is walled as the model. Code map (README.md), lowest first: the model (store/, behaviour/ < service/ < jira/ < rules/ < seed/) < kernel/ < handlers/, openapi/ < pipeline/'s steps < ui/, admin.ts, docs.ts < pipeline/index.ts < server.ts < index.ts, cli.ts. Move the shared code down, or pass it in.",
  },
  {
    includes: ['src/store/**', 'src/behaviour/**'],
    forbid: ['../**'],
    message:
      "store/ (the state) and behaviour/ (the knobs) are the bottom of the model: they import nothing else of src/. Code map (README.md), lowest first: the model (store/, behaviour/ < service/ < jira/ < rules/ < seed/) < kernel/ < handlers/, openapi/ < pipeline/'s steps < ui/, admin.ts, docs.ts < pipeline/index.ts < server.ts < index.ts, cli.ts. Move the shared code down, or pass it in.",
  },
  {
    includes: ['src/service/**'],
    forbid: [
      '../jira/**',
      '../rules/**',
      '../seed/**',
      '../kernel/**',
      '../handlers/**',
      '../openapi/**',
      '../pipeline/**',
      '../ui/**',
      '../admin.js',
      '../docs.js',
      '../server.js',
      '../index.js',
      '../cli.js',
    ],
    message:
      "service/ imports only store/ and behaviour/. Code map (README.md), lowest first: the model (store/, behaviour/ < service/ < jira/ < rules/ < seed/) < kernel/ < handlers/, openapi/ < pipeline/'s steps < ui/, admin.ts, docs.ts < pipeline/index.ts < server.ts < index.ts, cli.ts. Move the shared code down, or pass it in.",
  },
  {
    includes: ['src/jira/**'],
    forbid: [
      '../rules/**',
      '../seed/**',
      '../kernel/**',
      '../handlers/**',
      '../openapi/**',
      '../pipeline/**',
      '../ui/**',
      '../admin.js',
      '../docs.js',
      '../server.js',
      '../index.js',
      '../cli.js',
    ],
    message:
      "jira/ imports only store/, behaviour/ and service/. Code map (README.md), lowest first: the model (store/, behaviour/ < service/ < jira/ < rules/ < seed/) < kernel/ < handlers/, openapi/ < pipeline/'s steps < ui/, admin.ts, docs.ts < pipeline/index.ts < server.ts < index.ts, cli.ts. Move the shared code down, or pass it in.",
  },
  {
    includes: ['src/rules/**'],
    forbid: [
      '../seed/**',
      '../kernel/**',
      '../handlers/**',
      '../openapi/**',
      '../pipeline/**',
      '../ui/**',
      '../admin.js',
      '../docs.js',
      '../server.js',
      '../index.js',
      '../cli.js',
    ],
    message:
      "rules/ imports only store/, behaviour/, service/ and jira/. Code map (README.md), lowest first: the model (store/, behaviour/ < service/ < jira/ < rules/ < seed/) < kernel/ < handlers/, openapi/ < pipeline/'s steps < ui/, admin.ts, docs.ts < pipeline/index.ts < server.ts < index.ts, cli.ts. Move the shared code down, or pass it in.",
  },
  {
    includes: ['src/seed/**'],
    forbid: [
      '../kernel/**',
      '../handlers/**',
      '../openapi/**',
      '../pipeline/**',
      '../ui/**',
      '../admin.js',
      '../docs.js',
      '../server.js',
      '../index.js',
      '../cli.js',
    ],
    message:
      "seed/ imports only the model. Code map (README.md), lowest first: the model (store/, behaviour/ < service/ < jira/ < rules/ < seed/) < kernel/ < handlers/, openapi/ < pipeline/'s steps < ui/, admin.ts, docs.ts < pipeline/index.ts < server.ts < index.ts, cli.ts. Move the shared code down, or pass it in.",
  },
  {
    includes: ['src/kernel/**'],
    forbid: [
      '../handlers/**',
      '../openapi/**',
      '../pipeline/**',
      '../ui/**',
      '../admin.js',
      '../docs.js',
      '../server.js',
      '../index.js',
      '../cli.js',
    ],
    message:
      "kernel/ imports only the model. Code map (README.md), lowest first: the model (store/, behaviour/ < service/ < jira/ < rules/ < seed/) < kernel/ < handlers/, openapi/ < pipeline/'s steps < ui/, admin.ts, docs.ts < pipeline/index.ts < server.ts < index.ts, cli.ts. Move the shared code down, or pass it in.",
  },
  {
    includes: ['src/handlers/**'],
    forbid: [
      '../openapi/**',
      '../pipeline/**',
      '../ui/**',
      '../admin.js',
      '../docs.js',
      '../server.js',
      '../index.js',
      '../cli.js',
    ],
    message:
      "handlers/ import only the model and kernel/. Code map (README.md), lowest first: the model (store/, behaviour/ < service/ < jira/ < rules/ < seed/) < kernel/ < handlers/, openapi/ < pipeline/'s steps < ui/, admin.ts, docs.ts < pipeline/index.ts < server.ts < index.ts, cli.ts. Move the shared code down, or pass it in.",
  },
  {
    includes: ['src/openapi/**'],
    forbid: [
      '../kernel/**',
      '../handlers/**',
      '../pipeline/**',
      '../ui/**',
      '../admin.js',
      '../docs.js',
      '../server.js',
      '../index.js',
      '../cli.js',
    ],
    message:
      "openapi/ imports only the model. Code map (README.md), lowest first: the model (store/, behaviour/ < service/ < jira/ < rules/ < seed/) < kernel/ < handlers/, openapi/ < pipeline/'s steps < ui/, admin.ts, docs.ts < pipeline/index.ts < server.ts < index.ts, cli.ts. Move the shared code down, or pass it in.",
  },
  {
    includes: ['src/pipeline/**', '!src/pipeline/index.ts'],
    forbid: [
      './index.js',
      '../openapi/**',
      '../ui/**',
      '../admin.js',
      '../docs.js',
      '../server.js',
      '../index.js',
      '../cli.js',
    ],
    message:
      "A step in pipeline/ imports only the model, kernel/ and handlers/ (pipeline/index.ts runs the steps). Code map (README.md), lowest first: the model (store/, behaviour/ < service/ < jira/ < rules/ < seed/) < kernel/ < handlers/, openapi/ < pipeline/'s steps < ui/, admin.ts, docs.ts < pipeline/index.ts < server.ts < index.ts, cli.ts. Move the shared code down, or pass it in.",
  },
  {
    includes: ['src/ui/**'],
    forbid: [
      '../handlers/**',
      '../openapi/**',
      '../pipeline/**',
      '../admin.js',
      '../docs.js',
      '../server.js',
      '../index.js',
      '../cli.js',
    ],
    message:
      "ui/ imports only the model and kernel/. Code map (README.md), lowest first: the model (store/, behaviour/ < service/ < jira/ < rules/ < seed/) < kernel/ < handlers/, openapi/ < pipeline/'s steps < ui/, admin.ts, docs.ts < pipeline/index.ts < server.ts < index.ts, cli.ts. Move the shared code down, or pass it in.",
  },
  {
    includes: ['src/admin.ts', 'src/docs.ts'],
    forbid: [
      './handlers/**',
      './pipeline/**',
      './ui/**',
      './admin.js',
      './docs.js',
      './server.js',
      './index.js',
      './cli.js',
    ],
    message:
      "The emulator's own endpoints (admin.ts, docs.ts) import only the model, kernel/ and openapi/. Code map (README.md), lowest first: the model (store/, behaviour/ < service/ < jira/ < rules/ < seed/) < kernel/ < handlers/, openapi/ < pipeline/'s steps < ui/, admin.ts, docs.ts < pipeline/index.ts < server.ts < index.ts, cli.ts. Move the shared code down, or pass it in.",
  },
  {
    includes: ['src/pipeline/index.ts'],
    forbid: ['../server.js', '../index.js', '../cli.js'],
    message:
      "pipeline/index.ts imports neither server.ts nor the public API (index.ts, cli.ts). Code map (README.md), lowest first: the model (store/, behaviour/ < service/ < jira/ < rules/ < seed/) < kernel/ < handlers/, openapi/ < pipeline/'s steps < ui/, admin.ts, docs.ts < pipeline/index.ts < server.ts < index.ts, cli.ts. Move the shared code down, or pass it in.",
  },
  {
    includes: ['src/server.ts'],
    forbid: ['./index.js', './cli.js'],
    message:
      "server.ts imports neither index.ts nor cli.ts. Code map (README.md), lowest first: the model (store/, behaviour/ < service/ < jira/ < rules/ < seed/) < kernel/ < handlers/, openapi/ < pipeline/'s steps < ui/, admin.ts, docs.ts < pipeline/index.ts < server.ts < index.ts, cli.ts. Move the shared code down, or pass it in.",
  },
];

export function emulatorOverrides() {
  return [
    wall(['src/**'], [EMULATOR_CONTRACT_ONLY]),
    ...EMULATOR_WALLS.map((w) => wall(w.includes, [EMULATOR_CONTRACT_ONLY, { group: w.forbid, message: w.message }])),
  ];
}

// ---------------------------------------------------------------------------------------------------------------

export const BIOME_FILES = {
  'packages/core/biome.json': coreOverrides,
  'packages/emulator/biome.json': emulatorOverrides,
};

/** A nested biome.json as this table makes it (Biome's own formatting of JSON: two spaces, one key per line). */
export function biomeFile(overrides) {
  const config = {
    $schema: 'https://biomejs.dev/schemas/2.6.8/schema.json',
    root: false,
    extends: '//',
    overrides: overrides(),
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** The files whose content differs from what the table makes. */
export function drift() {
  return Object.entries(BIOME_FILES)
    .filter(
      ([file, make]) =>
        JSON.stringify(JSON.parse(readFileSync(join(ROOT, file), 'utf8'))) !==
        JSON.stringify(JSON.parse(biomeFile(make))),
    )
    .map(([file]) => file);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--write')) {
    for (const [file, make] of Object.entries(BIOME_FILES)) writeFileSync(join(ROOT, file), biomeFile(make));
    console.log(`walls: wrote ${Object.keys(BIOME_FILES).join(', ')} (run npx biome format --write on them)`);
  } else {
    const off = drift();
    if (off.length) {
      console.error(`walls: ${off.join(', ')} differ from walls.mjs: edit walls.mjs, then node walls.mjs --write`);
      process.exit(1);
    }
    console.log('walls: the biome.json files match walls.mjs');
  }
}
