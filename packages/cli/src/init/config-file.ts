import { parseJsonObject, writeJson } from './edit-json.js';

/**
 * The project's casebridge.config.json: the url, project and test plan from the command line or the environment,
 * checked, then merged into the file there. Never a credential.
 */

const PROJECT_KEY = /^[A-Z][A-Z0-9_]+$/;
const ISSUE_KEY = /^[A-Z][A-Z0-9_]*-[1-9][0-9]*$/;
export const CONFIG_FILE = 'casebridge.config.json';
/** The other forms of the project's casebridge config (core's loader reads the first one found). */
export const MODULE_CONFIGS = ['mjs', 'cjs', 'js', 'ts', 'mts', 'cts'].map((x) => `casebridge.config.${x}`);

export interface Values {
  url?: { value: string; explicit: boolean };
  projectKey?: { value: string; explicit: boolean };
  testPlan?: { value: string; explicit: boolean };
}

/**
 * The options from the command line, else the environment; a value that is not valid is an error naming where it
 * came from and what was expected.
 */
export function values(
  opts: { url?: string; project?: string; plan?: string },
  env: NodeJS.ProcessEnv,
): { values: Values; errors: string[] } {
  const out: Values = {};
  const errors: string[] = [];
  const pick = (
    key: keyof Values,
    flag: string,
    given: string | undefined,
    envName: string,
    valid: (v: string) => boolean,
    expected: string,
  ) => {
    const fromEnv = env[envName]?.trim() || undefined;
    const value = given ?? fromEnv;
    if (value === undefined) return;
    if (!valid(value)) {
      errors.push(`${given !== undefined ? flag : envName}: expected ${expected}, got "${value}"`);
      return;
    }
    out[key] = { value, explicit: given !== undefined };
  };
  const isUrl = (v: string) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
    } catch {
      return false;
    }
  };
  pick(
    'url',
    '--url',
    opts.url,
    'CASEBRIDGE_URL',
    isUrl,
    'the Jira base URL (http or https), e.g. https://jira.example.com',
  );
  pick(
    'projectKey',
    '--project',
    opts.project,
    'CASEBRIDGE_PROJECT',
    (v) => PROJECT_KEY.test(v),
    'a Jira project key such as PROJ (a capital, then capitals, digits or _)',
  );
  pick(
    'testPlan',
    '--plan',
    opts.plan,
    'CASEBRIDGE_TEST_PLAN',
    (v) => ISSUE_KEY.test(v),
    "a test plan's issue key such as PROJ-1 (project key, dash, number)",
  );
  return { values: out, errors };
}

/**
 * casebridge.config.json with the values merged in: given options replace, values from the environment only fill
 * what is missing, every other key stays. `mode: "cycle"` comes with a test plan; ad hoc is the default and is not
 * written.
 */
export function configFile(
  before: string | undefined,
  v: Values,
): { after?: string; doc: Record<string, unknown>; why?: string } {
  let doc: Record<string, unknown> = {};
  if (before !== undefined) {
    const parsed = parseJsonObject(before, 'it is not a JSON object of options');
    if ('why' in parsed) return { doc, why: parsed.why };
    doc = parsed.doc;
  }
  const next: Record<string, unknown> = { ...doc };
  const set = (key: string, x: { value: string; explicit: boolean } | undefined) => {
    if (x && (x.explicit || next[key] === undefined)) next[key] = x.value;
  };
  set('url', v.url);
  set('projectKey', v.projectKey);
  const planAdded = v.testPlan !== undefined && (v.testPlan.explicit || next.testPlan === undefined);
  if (planAdded && (v.testPlan?.explicit || next.mode === undefined)) next.mode = 'cycle';
  set('testPlan', v.testPlan);
  if (before === undefined && Object.keys(next).length === 0) return { doc: next };
  if (before !== undefined && JSON.stringify(next) === JSON.stringify(doc)) return { doc: next };
  return { after: writeJson(before, next), doc: next };
}
