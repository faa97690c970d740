import { statSync } from 'node:fs';
import type { FileInput } from './multipart.js';
import { mapOperations } from './operations.js';
import type { ContentRepositoryClient, StoreFileOptions } from './repo.js';
import type { TestManagementClient } from './tm.js';

type Input = any;

/** What a dry run answers for one operation, and what it shows of the call when that is not the input itself. */
interface StandIn {
  answer: (input: Input, next: () => number) => unknown;
  shown?: (input: Input) => unknown;
}

const nothing = () => undefined;
const none = () => [];

/** An upload is shown by its files' names and sizes, never their bytes. */
function upload(input: { runId: number; stepno?: number; file: FileInput | readonly FileInput[] }) {
  const files = (Array.isArray(input.file) ? input.file : [input.file]) as readonly FileInput[];
  const shown = files.map((file) => {
    const spec = typeof file === 'string' ? { path: file } : file;
    const bytes =
      'data' in spec
        ? typeof spec.data === 'string'
          ? Buffer.byteLength(spec.data)
          : spec.data.byteLength
        : statSync(spec.path).size;
    return { fileName: spec.fileName, bytes };
  });
  return {
    runId: input.runId,
    ...(input.stepno === undefined ? {} : { stepno: input.stepno }),
    ...(shown.length === 1 ? shown[0] : { files: shown }),
  };
}

/** A dry run's answers to a reporting run's operations; any other operation is refused, so nothing is sent. */
const STAND_INS: Record<string, StandIn> = {
  'plans.cycles': { answer: none },
  'plans.addCycle': { answer: nothing },
  'plans.members': { answer: none },
  'plans.addMembers': { answer: nothing },
  'cycles.workflow': { answer: nothing },
  'cycles.testRuns': { answer: none },
  'cycles.testRunsByCycleId': { answer: none },
  'cycles.addMembersToTestCycle': { answer: nothing },
  // A run per case and attribute set, as the service answers them: made-up ids, the `-` values left out.
  'cycles.createTestRuns': {
    answer: (input: { testCaseKeys: string; attributeValues: Record<string, string>[] }, next) => ({
      createdRuns: input.attributeValues.flatMap((values) => {
        const set = Object.fromEntries(Object.entries(values).filter(([name, v]) => name !== '-' && v !== '-'));
        return input.testCaseKeys.split(',').map((key) => ({
          id: next(),
          testCaseKey: key.trim(),
          summary: '',
          status: 'Not Tested',
          attributeValues: set,
        }));
      }),
      errors: [],
    }),
  },
  'runs.get': { answer: () => ({ testRunDetails: { testRunSteps: [] } }) },
  'runs.update': { answer: nothing },
  'runs.updateStep': { answer: nothing },
  'runs.bulkStatusUpdate': { answer: nothing },
  'runs.adhocCreate': { answer: (_, next) => ({ id: next() }) },
  'cases.createTestCaseInSuite': {
    answer: (input: { fields: { project: { key: string } } }) => ({ testCaseKey: `${input.fields.project.key}-NEW` }),
  },
  'requirements.linkedTestCases': { answer: none },
  'requirements.linkTestCase': { answer: nothing },
  'attachments.addToRun': { answer: nothing, shown: upload },
  'attachments.addToRunStep': { answer: nothing, shown: upload },
};

/** The clients of a dry run, and the calls they were asked for (`<client path> <input as JSON>`), in order. */
export interface DryRunClients {
  readonly tm: TestManagementClient;
  readonly repo?: ContentRepositoryClient;
  readonly calls: readonly string[];
}

/** The clients for a dry run: every operation is logged and answered by its stand-in; call sites need no branch. */
export function withDryRun(
  clients: { tm: TestManagementClient; repo?: ContentRepositoryClient },
  log: (line: string) => void = () => undefined,
): DryRunClients {
  const calls: string[] = [];
  let ids = 0;
  const next = () => ++ids;
  const record = (path: string, shown: unknown) => {
    const line = `${path} ${JSON.stringify(shown, (k, v) => (k === 'data' ? '<bytes>' : v))}`;
    calls.push(line);
    log(`dry run: ${line}`);
  };
  const tm = mapOperations(clients.tm, (_, group, name) => {
    const path = `${group}.${name}`;
    const standIn = STAND_INS[path];
    return async (input: Input) => {
      if (!standIn) throw new Error(`dry run: ${path} is not simulated, and a dry run sends nothing`);
      record(path, standIn.shown ? standIn.shown(input) : input);
      return standIn.answer(input, next);
    };
  });
  if (!clients.repo) return { tm, calls };
  const repo = Object.create(clients.repo) as ContentRepositoryClient;
  repo.storeFile = async (file: FileInput, options: StoreFileOptions = {}) => {
    const path = typeof file === 'string' ? file : 'path' in file ? file.path : '(in memory)';
    record('repository.storeFile', { path, name: options.name });
    return { downloadUrl: `(dry run) ${options.name}` } as Awaited<ReturnType<ContentRepositoryClient['storeFile']>>;
  };
  return { tm, repo, calls };
}
