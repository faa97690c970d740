import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { AmbiguousError, NotFoundError } from '../client/errors.js';
import type { TestManagementClient } from '../client/tm.js';
import type { Caller } from './delivery.js';
import { type MappingFile, mappingKey } from './mapping.js';
import type { TestResult } from './model.js';
import { truncate } from './text.js';
import { topSteps } from './work.js';

/**
 * Test cases for unmapped tests (`autoCreate: true`). A case is created once per mapping key
 * (`<file> > <title path>`): its description carries that key as `casebridge-test: <key>`, and before creating,
 * the project is searched for a case that carries it. Within one process, one creation per mapping key runs at a
 * time; across machines (shards), a second search right after the create picks the oldest case if two shards raced,
 * and the result goes to that one. The new key is written into the mapping file so the next run reuses it.
 */

const inFlight = new Map<string, Promise<string>>();

/** The suite path of a test file: its folders and its name without `.spec.ts` / `.test.js` and the like. */
export function suitePathOf(file: string): string {
  const parts = file.replace(/\\/g, '/').split('/').filter(Boolean);
  const last = (parts.pop() ?? 'tests').replace(/(\.(spec|test|e2e|cy))?\.[cm]?[jt]sx?$/i, '');
  return [...parts, last].map((p) => p.replace(/\//g, '\\/')).join('/');
}

function marker(t: Pick<TestResult, 'file' | 'titlePath'>): string {
  return `casebridge-test: ${mappingKey(t)}`;
}

async function findExisting(tm: TestManagementClient, project: string, summary: string, mark: string) {
  const phrase = summary.replace(/["\\]/g, ' ').slice(0, 200);
  const jql = `project = "${project}" AND issuetype = "Test Case" AND summary ~ "${phrase}" ORDER BY created ASC`;
  const found = await tm.jira.search({ jql, fields: 'summary,description', maxResults: 50 });
  return found.issues
    .filter((i) => String((i as { fields?: { description?: unknown } }).fields?.description ?? '').includes(mark))
    .map((i) => i.key);
}

export function createCaseFor(
  tm: TestManagementClient,
  api: Caller,
  project: string,
  test: TestResult,
  titleOf: (t: TestResult) => string,
): Promise<string> {
  const k = `${project}:${mappingKey(test)}`;
  let p = inFlight.get(k);
  if (!p) {
    p = create(tm, api, project, test, titleOf(test));
    p.catch(() => inFlight.delete(k));
    inFlight.set(k, p);
  }
  return p;
}

async function create(
  tm: TestManagementClient,
  api: Caller,
  project: string,
  test: TestResult,
  title: string,
): Promise<string> {
  const summary = truncate(title, 255);
  const mark = marker(test);
  if (!api.dryRun) {
    const existing = await findExisting(tm, project, summary, mark);
    if (existing[0]) return existing[0];
  }
  const fields = {
    project: { key: project },
    summary,
    description: `Created by casebridge for ${test.file}${test.line ? `:${test.line}` : ''}\n${mark}`,
  };
  const testcasesteps = topSteps(test).map((s) => ({ step: truncate(s.title, 2000), expectedResult: '' }));
  const input = {
    fields,
    testcasesteps,
    linkToTestSuite: { testSuitePath: suitePathOf(test.file), projectKey: project },
  };
  let key: string;
  try {
    const made = await api.call(
      'cases.createTestCaseInSuite',
      input,
      () => tm.cases.createTestCaseInSuite(input),
      () => ({ testCaseKey: `${project}-NEW` }) as never,
    );
    key = made.testCaseKey;
  } catch (err) {
    if (err instanceof AmbiguousError) {
      const again = await findExisting(tm, project, summary, mark);
      if (again[0]) return again[0];
      throw err;
    }
    // The older service variant has no suite creation: a plain test case.
    if (!(err instanceof NotFoundError)) throw err;
    const made = await tm.cases.createTestCase({ fields, testcasesteps });
    key = made.key;
  }
  if (api.dryRun) return key;
  // Another shard may have created the same case at the same moment: the oldest one wins, for both.
  const all = await findExisting(tm, project, summary, mark);
  return all[0] ?? key;
}

/**
 * Adds keys to the mapping file: read, merge, write to a temporary file and rename, so a concurrent writer on the
 * same machine loses nothing and a reader never sees half a file. Keys are sorted for reviewable diffs.
 */
export function writeMapping(path: string, added: MappingFile): void {
  let current: MappingFile = {};
  try {
    current = JSON.parse(readFileSync(path, 'utf8')) as MappingFile;
  } catch {
    current = {};
  }
  const merged: MappingFile = { ...current, ...added };
  const sorted = Object.fromEntries(
    Object.keys(merged)
      .sort()
      .map((k) => [k, merged[k] as string | string[]]),
  );
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${randomUUID().slice(0, 8)}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(sorted, null, 2)}\n`);
  renameSync(tmp, path);
}
