// @ts-check
/**
 * The walls between folders: which folder of packages/*\/src may import which. `npm run lint` checks them
 * (dependency-cruiser; a rule's comment says how to mend a violation), test/walls.test.ts proves a bad import is
 * refused. Paths are regular expressions over paths from the root, resolved (tsconfig.json's paths, then the
 * workspace packages in node_modules), type imports counted.
 */
const CORE = '^packages/core/src/';
const EMU = '^packages/emulator/src/';

/** The core's layers, lowest first (docs/architecture.md, "The core's rooms"): each imports only the ones under it. */
const CORE_LAYERS = [
  ['contract/'],
  ['client/', 'adapter/text\\.ts$'], // adapter/text.ts: shared by the engine and the adapter entry
  ['engine/kernel/'],
  ['engine/config/'],
  ['engine/jira/'],
  ['engine/cases/', 'engine/journal/'],
  ['engine/defects/'],
  ['engine/delivery/'],
  ['engine/report/'],
  ['engine/query/'],
  ['engine/publish/'], // the pull request's report: read through query/, posted with client/codehost.ts
  ['engine/[^/]+$'], // engine.ts, session.ts, ...: the façade
];

/** The emulator's layers (packages/emulator/README.md, "Code map"): what else of src/ each place may import. */
const MODEL = ['store/', 'behaviour/', 'service/', 'jira/', 'rules/', 'seed/']; // lowest first
const STEPS = 'pipeline/(?!index\\.ts$)';
const OWN = [...MODEL, 'kernel/', 'openapi/'];
const REQUEST = [...OWN, 'handlers/', STEPS, 'ui/', 'admin\\.ts$', 'docs\\.ts$'];
const EMULATOR_LAYERS = {
  'store/': [],
  'behaviour/': [],
  'service/': MODEL.slice(0, 2),
  'jira/': MODEL.slice(0, 3),
  'rules/': MODEL.slice(0, 4),
  'seed/': MODEL.slice(0, 5),
  'kernel/': MODEL,
  'openapi/': MODEL,
  'handlers/': [...MODEL, 'kernel/'],
  [STEPS]: [...MODEL, 'kernel/', 'handlers/'],
  'ui/': [...MODEL, 'kernel/'],
  'admin\\.ts$': OWN,
  'docs\\.ts$': OWN,
  'pipeline/index\\.ts$': REQUEST,
  'server\\.ts$': [...REQUEST, 'pipeline/index\\.ts$'],
};

const NAMES = { 'engine/[^/]+$': 'engine/*.ts', [STEPS]: 'pipeline/(steps)' };
const show = (places) => places.map((p) => NAMES[p] ?? p.replace(/\\|\$$/g, '')).join(', ');
/**
 * One rule per place of `table` (`name:place`): a file there imports, of `root`, only its own place and the places it
 * lists; and one (`name:outside`): a file of `root` in no place nor in `free` imports nothing (a new folder gets its
 * place in the table first).
 */
const layers = (name, root, table, free, order) => [
  ...Object.entries(table).map(([place, allowed]) => ({
    name: `${name}:${show([place])}`,
    comment: `${show([place])} imports, of ${root.slice(1)}, only itself${allowed.length ? ` and ${show(allowed)}` : ''}. ${order} Move the shared code down, or pass it in.`,
    from: { path: root + place },
    to: { path: root, pathNot: [place, ...allowed].map((p) => root + p) },
  })),
  {
    name: `${name}:outside`,
    comment: `A file of ${root.slice(1)} outside the layers: give its folder a place in .dependency-cruiser.cjs. ${order}`,
    from: { path: root, pathNot: [...Object.keys(table), ...free].map((p) => root + p) },
    to: {},
  },
];
const entries = (...files) => files.map((f) => `^packages/${f}\\.ts$`);

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  // Every rule is an error: npm run lint fails on any.
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycle, type imports counted: move what both files need into a third, lower one.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that resolves to no file: a typo, or a deep path the package does not export (dist/...).',
      from: { path: '^packages/[^/]+/src/' },
      to: { couldNotResolve: true },
    },
    {
      name: 'no-relative-across-packages',
      comment: 'A package reaches another one by its package name (@casebridge/...), never by a relative path.',
      from: { path: '^packages/([^/]+)/src/' },
      to: { dependencyTypes: ['local'], dependencyTypesNot: ['aliased'], pathNot: '^packages/$1/' },
    },
    ...layers(
      'core-layers',
      CORE,
      Object.fromEntries(CORE_LAYERS.flatMap((row, i) => row.map((p) => [p, CORE_LAYERS.slice(0, i).flat()]))),
      ['(index|internal)\\.ts$', 'adapter/', 'runtime/'],
      `Layers, lowest first: ${CORE_LAYERS.map(show).join(' < ')}.`,
    ),
    {
      name: 'core-light-entries',
      comment:
        "The adapter and runtime entries hold Node's built-ins only and reach the rest of the core only for engine/kernel/model.ts, engine/kernel/types.ts and engine/config/options.ts (types and plain data), so a test file that imports them loads no engine and no HTTP stack.",
      from: { path: `${CORE}(adapter|runtime)/` },
      to: {
        dependencyTypesNot: ['core'],
        pathNot: [`${CORE}$1/`, `${CORE}engine/kernel/(model|types)\\.ts$`, `${CORE}engine/config/options\\.ts$`],
      },
    },
    {
      name: 'adapters-use-core-entries',
      comment:
        "An adapter imports its own files, Node's built-ins, its runner and, of casebridge, @casebridge/core, @casebridge/core/adapter and @casebridge/core/runtime only: no other entry, no other package, no HTTP stack (the core sends). Ask the core for what is missing through one of those entries.",
      from: { path: '^packages/(playwright|vitest|jest)/src/' },
      to: {
        dependencyTypesNot: ['core'],
        pathNot: [
          '^packages/$1/src/',
          'node_modules/@?$1[/-]',
          ...entries('core/src/index', 'core/src/adapter/index', 'core/src/runtime/channel'),
        ],
      },
    },
    {
      name: 'cli-uses-entries',
      comment:
        'The CLI reaches the other packages through @casebridge/core, @casebridge/core/internal, @casebridge/core/adapter and @casebridge/emulator only: an entry is what the build keeps stable.',
      from: { path: '^packages/cli/src/' },
      to: {
        path: '^packages/',
        pathNot: [
          '^packages/cli/src/',
          ...entries('core/src/index', 'core/src/internal', 'core/src/adapter/index', 'emulator/src/index'),
        ],
      },
    },
    {
      name: 'emulator-contract-only',
      comment:
        "The emulator is built from @casebridge/core/contract only, never from the core's engine or client, so it cannot agree with a bug in them.",
      from: { path: EMU },
      to: { path: '^packages/', pathNot: [EMU, ...entries('core/src/contract/index')] },
    },
    ...layers(
      'emulator-layers',
      EMU,
      EMULATOR_LAYERS,
      ['(index|cli|cli-options)\\.ts$'],
      'Code map (packages/emulator/README.md), lowest first: the model (store/, behaviour/ < service/ < jira/ < rules/ < seed/) < kernel/ < handlers/, openapi/ < pipeline/(steps) < ui/, admin.ts, docs.ts < pipeline/index.ts < server.ts < index.ts, cli.ts, cli-options.ts (the top of src/ holds these files only).',
    ),
  ].map((rule) => ({ ...rule, severity: 'error' })),
  options: {
    // npm run lint cruises packages/*/src and test, test/ and examples/: the walls hold for packages/*/src, no-circular
    // everywhere. A build (dist/) is an import's end, never cruised itself.
    exclude: { path: ['^test/\\.fixtures/', '^examples/[^/]+/node_modules/', '/(test-results|\\.casebridge)/'] },
    doNotFollow: { path: ['node_modules', '^packages/[^/]+/dist/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // The workspace packages and the others by their package.json's exports, as Node resolves them.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
