import {
  type EmulatorOptions,
  type FaultRuleInput,
  type RunningEmulator,
  type SeedInput,
  startEmulator,
} from '@casebridge/emulator';
import { distinct, type Findings, journalLeft, keys, type Mapping, reporterSaid, STATUS } from './harsh.js';
import type { RealSuite } from './realsuite.js';
import type { RunOutput } from './runner.js';
import { cycleState } from './state.js';

/**
 * The world of the harsh-service test (test/harsh.e2e.test.ts): its project, seeds and reporter options, the
 * emulator each row starts (realistic profile, 20 ms away, the row's fault rules), the probes that check the emulator
 * really has a row's behaviour, and the readings of what a run left (runs of a cycle against what each test should
 * have, the journal, what the reporter said).
 */

export const PROJECT = 'HARSH';
export const PLAN = `${PROJECT}-1`;
export const TOKEN = 'harsh-token';
export const LATENCY_MS = 20;

/** 60 mapped tests that pass, and 3 that fail each its own way (HARSH-62..64). */
export const PASSING = keys(PROJECT, 2, 60);
export const FAILING = keys(PROJECT, 62, 3);

export const USERS: SeedInput['users'] = [
  { name: 'ci', displayName: 'CI', password: 'ci', tokens: [TOKEN], admin: true },
];
/** A project where the search probes make their issues, away from the cases under test. */
export const PROBE = { key: 'PROBE', name: 'Probes', issues: [] };
/** A plan with 63 cases in it: the tests carry their keys. */
export const MAPPED_SEED: SeedInput = {
  users: USERS,
  projects: [
    {
      key: PROJECT,
      name: 'Harsh service',
      issues: [
        { type: 'Test Plan', summary: 'Regression', members: [...PASSING, ...FAILING] },
        ...[...PASSING, ...FAILING].map((k) => ({ type: 'Test Case', summary: `case ${k}` })),
      ],
    },
    PROBE,
  ],
};
/** An empty plan and no cases: a first run with autoCreate. */
export const EMPTY_SEED: SeedInput = {
  users: USERS,
  projects: [{ key: PROJECT, name: 'Harsh service', issues: [{ type: 'Test Plan', summary: 'Regression' }] }, PROBE],
};

export const MAPPED_OPTIONS = { mode: 'cycle', testPlan: PLAN };
export const AUTO_OPTIONS = { autoCreate: true, mode: 'cycle', testPlan: PLAN };

// ---- the emulator -------------------------------------------------------------------------------------------------

/**
 * Every row runs on the emulator's realistic profile (Jira Data Center as it is: two nodes, a 1 s index lag, pages
 * of 100, a result window, tokenised `~`); a row that is about one of its behaviours sets that knob to the row's
 * value. The probes in those rows check that the emulator really behaves so, so a knob it lost fails the row
 * instead of passing it on a kind emulator.
 */
export const realistic = (jira: EmulatorOptions['jira'] = {}): Partial<EmulatorOptions> => ({
  profile: 'realistic',
  jira,
});

/** A fresh emulator for one row: the seed, 20 ms on every request, and the row's fault rules. */
export async function start(
  seed: SeedInput,
  {
    rules = [],
    faultSeed = 23,
    ...options
  }: { rules?: FaultRuleInput[]; faultSeed?: number } & Partial<EmulatorOptions> = {},
): Promise<RunningEmulator> {
  const emu = await startEmulator({ port: 0, seed, ...realistic(), ...options });
  setFaults(emu, rules, faultSeed);
  return emu;
}

/** The row's rules, after the 20 ms on every request. */
export function setFaults(emu: RunningEmulator, rules: FaultRuleInput[], seed = 23): void {
  emu.faults.set([{ route: '**', latencyMs: LATENCY_MS }, ...rules], seed);
}

export async function search(emu: RunningEmulator, jql: string, startAt: number, maxResults: number) {
  const q = new URLSearchParams({ jql, startAt: String(startAt), maxResults: String(maxResults), fields: 'summary' });
  const res = await fetch(`${emu.url}/rest/api/2/search?${q}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const text = await res.text();
  return { status: res.status, text, json: res.ok ? (JSON.parse(text) as { total: number; issues: unknown[] }) : null };
}

// ---- reading what a run left --------------------------------------------------------------------------------------

export const env = (emu: RunningEmulator, cycle: string, extra: Record<string, string> = {}) => ({
  CASEBRIDGE_URL: emu.url,
  CASEBRIDGE_TOKEN: TOKEN,
  CASEBRIDGE_PROJECT: PROJECT,
  CASEBRIDGE_CYCLE: cycle,
  ...extra,
});

export const testCases = (emu: RunningEmulator) => {
  const project = emu.store.projects.find((p) => p.key === PROJECT);
  return emu.store.issues.filter((i) => i.type === 'Test Case' && i.projectId === project?.id);
};

/**
 * Runs of `cycle` against the status each case key should have: how many are right, and the problems by name
 * (no run, several runs, wrong status, runs of no expected case).
 */
export function deliveredOf(
  emu: RunningEmulator,
  cycle: string,
  want: Map<string, string>,
  findings: Findings,
): { delivered: number; doubled: number } {
  const runsOf = new Map<string, string[]>();
  for (const r of cycleState(emu, cycle)) runsOf.set(r.key, [...(runsOf.get(r.key) ?? []), r.status]);
  const none: string[] = [];
  const several: string[] = [];
  const wrong: string[] = [];
  let delivered = 0;
  for (const [key, status] of want) {
    const got = runsOf.get(key) ?? [];
    if (got.length === 0) none.push(key);
    else if (got.length > 1) several.push(`${key} (${got.join(', ')})`);
    else if (got[0] !== status) wrong.push(`${key} is ${got[0]}, not ${status}`);
    else delivered += 1;
  }
  findings.add(`of ${want.size} results were not delivered: no run in cycle "${cycle}"`, none);
  findings.add(`results were delivered twice: several runs in cycle "${cycle}"`, several);
  findings.add(`results have the wrong status in cycle "${cycle}"`, wrong);
  findings.add(
    `runs in cycle "${cycle}" are of no test of the run`,
    [...runsOf.keys()].filter((k) => !want.has(k)),
  );
  return { delivered, doubled: several.length };
}

/** What a suite run should leave: case key → status, through the mapping file (a test without a key is lost). */
export function wantOfSuite(suite: RealSuite, mapping: Mapping, findings: Findings): Map<string, string> {
  const want = new Map<string, string>();
  const noKey: string[] = [];
  for (const [name, outcome] of distinct(suite)) {
    const key = mapping[name];
    if (typeof key === 'string') want.set(key, STATUS[outcome]);
    else noKey.push(name);
  }
  findings.add(`of ${distinct(suite).size} tests have no key in casebridge.keys.json (their results are lost)`, noKey);
  return want;
}

export function journalCheck(dir: string, findings: Findings): number {
  const left = journalLeft(dir);
  findings.add(`results are left in ${dir}/.casebridge/journal (lost with a CI runner)`, left);
  return left.filter((f) => f.endsWith('.json')).length;
}

export function said(out: RunOutput): string {
  return reporterSaid(out).slice(-10).join(' / ');
}

/** An issue created now must not be found by a search at once (the index lags): undefined when it is not. */
export async function lagProbe(emu: RunningEmulator): Promise<string | undefined> {
  const res = await fetch(`${emu.url}/rest/api/2/issue`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ fields: { project: { key: 'PROBE' }, summary: 'lag probe', issuetype: { name: 'Bug' } } }),
  });
  if (!res.ok) return `the lag probe could not create an issue: ${res.status} ${await res.text()}`;
  const { key } = (await res.json()) as { key: string };
  const found = await search(emu, `key = ${key}`, 0, 10);
  if (found.json && found.json.total === 0) return undefined;
  return `the emulator has no index lag: ${key} was found by a search at once (see realistic() in this file)`;
}
