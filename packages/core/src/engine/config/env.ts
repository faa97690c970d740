import { STATUS_MAP_KEYS } from '../kernel/work.js';

/** `CASEBRIDGE_*` variables (the option each sets, how its text is read), and how option sources merge. */

export const ENV_OPTIONS: Record<
  string,
  { path: string[]; type: 'string' | 'boolean' | 'number' | 'share' | 'dryRun' | 'statusMap' | 'list' }
> = {
  CASEBRIDGE_ENABLED: { path: ['enabled'], type: 'boolean' },
  CASEBRIDGE_URL: { path: ['url'], type: 'string' },
  CASEBRIDGE_API_PREFIX: { path: ['apiPrefix'], type: 'string' },
  CASEBRIDGE_TOKEN: { path: ['token'], type: 'string' },
  CASEBRIDGE_USER: { path: ['user'], type: 'string' },
  CASEBRIDGE_PASSWORD: { path: ['password'], type: 'string' },
  CASEBRIDGE_AUTH_TYPE: { path: ['authType'], type: 'string' },
  CASEBRIDGE_PROJECT: { path: ['projectKey'], type: 'string' },
  CASEBRIDGE_MODE: { path: ['mode'], type: 'string' },
  CASEBRIDGE_TEST_PLAN: { path: ['testPlan'], type: 'string' },
  CASEBRIDGE_CYCLE: { path: ['cycle'], type: 'string' },
  CASEBRIDGE_ENVIRONMENT: { path: ['environment'], type: 'string' },
  CASEBRIDGE_BUILD: { path: ['build'], type: 'string' },
  CASEBRIDGE_COMPLETE_CYCLE: { path: ['completeCycle'], type: 'boolean' },
  CASEBRIDGE_PRELOAD_RUNS: { path: ['preloadRuns'], type: 'boolean' },
  CASEBRIDGE_HISTORY: { path: ['history'], type: 'boolean' },
  CASEBRIDGE_QUARANTINE: { path: ['quarantine', 'enabled'], type: 'boolean' },
  CASEBRIDGE_QUARANTINE_LABEL: { path: ['quarantine', 'label'], type: 'string' },
  CASEBRIDGE_QUARANTINE_MAX: { path: ['quarantine', 'max'], type: 'share' },
  CASEBRIDGE_SELECT_PLAN: { path: ['select', 'plan'], type: 'string' },
  CASEBRIDGE_SELECT_CYCLE: { path: ['select', 'cycle'], type: 'string' },
  CASEBRIDGE_SELECT_STATUS: { path: ['select', 'status'], type: 'list' },
  CASEBRIDGE_SELECT_TESTER: { path: ['select', 'tester'], type: 'string' },
  CASEBRIDGE_DEFECTS: { path: ['defects', 'enabled'], type: 'boolean' },
  CASEBRIDGE_DEFECTS_MAX: { path: ['defects', 'maxPerRun'], type: 'number' },
  CASEBRIDGE_STATUS_MAP: { path: ['statusMap'], type: 'statusMap' },
  CASEBRIDGE_AUTO_CREATE: { path: ['autoCreate'], type: 'boolean' },
  CASEBRIDGE_CREATE_BATCH_SIZE: { path: ['createBatchSize'], type: 'number' },
  CASEBRIDGE_DRY_RUN: { path: ['dryRun'], type: 'dryRun' },
  CASEBRIDGE_MAPPING_FILE: { path: ['mappingFile'], type: 'string' },
  CASEBRIDGE_JOURNAL_DIR: { path: ['journalDir'], type: 'string' },
  CASEBRIDGE_FLUSH_TIMEOUT_MS: { path: ['flushTimeoutMs'], type: 'number' },
  CASEBRIDGE_FLUSH_MAX_MS: { path: ['flushMaxMs'], type: 'number' },
  CASEBRIDGE_BULK_WAIT_MS: { path: ['bulkWaitMs'], type: 'number' },
  CASEBRIDGE_JIRA_INDEX_LAG_MS: { path: ['jira', 'indexLagMs'], type: 'number' },
  CASEBRIDGE_FAIL_ON_ERROR: { path: ['failOnError'], type: 'boolean' },
  CASEBRIDGE_DEBUG: { path: ['debug'], type: 'boolean' },
  CASEBRIDGE_ANNOTATIONS: { path: ['annotations'], type: 'boolean' },
  CASEBRIDGE_WATCH: { path: ['watch'], type: 'boolean' },
  CASEBRIDGE_PROXY: { path: ['proxy'], type: 'string' },
  CASEBRIDGE_CA_FILE: { path: ['caFile'], type: 'string' },
  CASEBRIDGE_TIMEOUT_MS: { path: ['timeouts', 'headersMs'], type: 'number' },
  CASEBRIDGE_REPOSITORY_URL: { path: ['repository', 'url'], type: 'string' },
  CASEBRIDGE_REPOSITORY_TOKEN: { path: ['repository', 'token'], type: 'string' },
  CASEBRIDGE_BITBUCKET_URL: { path: ['bitbucket', 'url'], type: 'string' },
  CASEBRIDGE_BITBUCKET_TOKEN: { path: ['bitbucket', 'token'], type: 'string' },
  CASEBRIDGE_BITBUCKET_REPO: { path: ['bitbucket', 'repo'], type: 'string' },
  CASEBRIDGE_BITBUCKET_REPORT_KEY: { path: ['bitbucket', 'reportKey'], type: 'string' },
  CASEBRIDGE_GITLAB_TOKEN: { path: ['gitlab', 'token'], type: 'string' },
  CASEBRIDGE_GITHUB_TOKEN: { path: ['github', 'token'], type: 'string' },
};

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off', '']);

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let cur = target;
  for (const part of path.slice(0, -1)) {
    if (typeof cur[part] !== 'object' || cur[part] === null) cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[path[path.length - 1] as string] = value;
}

/** The options set by environment variables, and the problems of values that cannot be read. */
export function optionsFromEnv(env: NodeJS.ProcessEnv): { options: Record<string, unknown>; problems: string[] } {
  const options: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, spec] of Object.entries(ENV_OPTIONS)) {
    const raw = env[name];
    if (raw === undefined) continue;
    const v = raw.trim();
    if (spec.type === 'string') {
      if (v !== '') setPath(options, spec.path, v);
    } else if (spec.type === 'list') {
      // Comma-separated, each trimmed: a value cannot hold a comma here (the config file's can).
      const items = v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
      if (items.length) setPath(options, spec.path, items);
    } else if (spec.type === 'statusMap') {
      const map = statusMapFromEnv(name, v, problems);
      if (map) setPath(options, spec.path, map);
    } else if (spec.type === 'share') {
      // A share such as 0.05 (the schema checks 0..1); `5%` reads as 0.05.
      const m = /^(\d*\.?\d+)(%?)$/.exec(v);
      if (!m) problems.push(`${name}: expected a share from 0 to 1 such as 0.05 (or 5%), got "${v}"`);
      else setPath(options, spec.path, Number(m[1]) / (m[2] ? 100 : 1));
    } else if (spec.type === 'number') {
      if (!/^\d+$/.test(v)) problems.push(`${name}: expected a whole number, got "${v}"`);
      else setPath(options, spec.path, Number(v));
    } else {
      const lower = v.toLowerCase();
      if (TRUE.has(lower)) setPath(options, spec.path, true);
      else if (FALSE.has(lower)) setPath(options, spec.path, false);
      else if (spec.type === 'dryRun') setPath(options, spec.path, v);
      else problems.push(`${name}: expected true or false, got "${v}"`);
    }
  }
  return { options, problems };
}

/** `skipped=Not Tested,flaky=Failed` as a `statusMap` (empty or `null`: leave the run); undefined on problems. */
function statusMapFromEnv(name: string, value: string, problems: string[]): Record<string, string | null> | undefined {
  const map: Record<string, string | null> = {};
  const before = problems.length;
  for (const part of value.split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    const key = (eq < 0 ? part : part.slice(0, eq)).trim();
    const match = STATUS_MAP_KEYS.find((k) => k.toLowerCase() === key.toLowerCase());
    if (eq < 0 || !match) {
      problems.push(
        `${name}: expected outcome=status pairs separated by commas, e.g. "skipped=Not Tested,flaky=Failed", with outcomes ${STATUS_MAP_KEYS.join(', ')}; got "${part.trim()}"`,
      );
      continue;
    }
    const status = part.slice(eq + 1).trim();
    map[match] = status === '' || status.toLowerCase() === 'null' ? null : status;
  }
  return problems.length === before ? map : undefined;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `high` wins; nested objects merge. */
export function mergeOptions(low: Record<string, unknown>, high: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...low };
  for (const [k, v] of Object.entries(high)) {
    if (v === undefined) continue;
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? mergeOptions(out[k] as Record<string, unknown>, v) : v;
  }
  return out;
}
