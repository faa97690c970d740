import { existsSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import {
  CaptchaError,
  type CasebridgeConfig,
  describeSearched,
  ForbiddenError,
  loadConfig,
  NetworkError,
  NotFoundError,
  type ScreenField,
  screenProblems,
  type TestManagementClient,
  TimeoutError,
  UnauthorizedError,
} from '@casebridge/core';
import {
  anyTarget,
  clientSettings,
  clientsFor,
  commitOf,
  cycleNameFor,
  keyPattern,
  mappingProblems,
  probeTargets,
  targetsOf,
} from '@casebridge/core/internal';
import type { Check } from './check.js';
import { statusMapCheck } from './doctor-statuses.js';
import type { CliOptions } from './options.js';

/**
 * `casebridge doctor`: every check a first run depends on, each with ✓ or ✗ and, for a ✗, the fix. The same
 * configuration sources as the reporters (options file, CASEBRIDGE_* variables). Exit code 0 only when all pass.
 */

// In its own file so that doctor-statuses.ts can name it without importing this one (an import cycle).
export type { Check } from './check.js';

/** TLS failures by the codes Node and undici give them. */
const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|DEPTH_ZERO|HOSTNAME/i;
const MAX_SKEW_S = 60;

function reach(err: unknown, c: CasebridgeConfig, what: string): Check {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof UnauthorizedError) {
    return {
      name: what,
      ok: false,
      detail: 'the service refused the credentials (HTTP 401)',
      fix: c.token
        ? 'check the token (CASEBRIDGE_TOKEN): a personal access token of a user with access to the project'
        : 'check CASEBRIDGE_USER and CASEBRIDGE_PASSWORD (sent as Basic, or for a session). A personal access token goes in token (CASEBRIDGE_TOKEN), sent as Bearer, never as the password: Jira refuses it there and counts each failed login towards the CAPTCHA',
    };
  }
  if (err instanceof CaptchaError) {
    return {
      name: what,
      ok: false,
      detail: `Jira asks for a CAPTCHA after failed logins of ${err.user ? `user ${err.user}` : 'the user of this token'} (HTTP 403, X-Authentication-Denied-Reason: CAPTCHA_CHALLENGE); doctor sent nothing more: each try counts as one more failed login`,
      fix: `log in once in a browser at ${err.loginUrl}, then check ${c.token ? 'the token (CASEBRIDGE_TOKEN)' : 'CASEBRIDGE_USER and CASEBRIDGE_PASSWORD'} before the next run`,
    };
  }
  if (err instanceof ForbiddenError) {
    return { name: what, ok: false, detail: message, fix: 'the user needs a synapseRT licence and project access' };
  }
  const code = err instanceof NetworkError ? (err.code ?? '') : '';
  if (TLS_CODES.test(code) || TLS_CODES.test(message)) {
    return {
      name: 'tls',
      ok: false,
      detail: `the TLS certificate of ${c.url} was not accepted (${code || message})`,
      fix: "give your company's CA as caFile (CASEBRIDGE_CA_FILE) or NODE_EXTRA_CA_CERTS; never turn verification off",
    };
  }
  if (err instanceof NetworkError || err instanceof TimeoutError) {
    return {
      name: what,
      ok: false,
      detail: `cannot reach ${c.url}: ${message}`,
      fix: 'check the URL (CASEBRIDGE_URL) and, behind a proxy, HTTPS_PROXY / NO_PROXY or the proxy option',
    };
  }
  return { name: what, ok: false, detail: message };
}

/** The proxy requests will use, named without its credentials. */
function proxyCheck(c: CasebridgeConfig, env: NodeJS.ProcessEnv): Check {
  const safe = (u: string) => {
    try {
      const url = new URL(u);
      url.username = '';
      url.password = '';
      return url.toString().replace(/\/$/, '');
    } catch {
      return '(not a URL)';
    }
  };
  if (c.proxy) return { name: 'proxy', ok: true, detail: `through ${safe(c.proxy)} (the proxy option)` };
  const https = c.url.startsWith('https:');
  const name = https ? ['HTTPS_PROXY', 'https_proxy'] : ['HTTP_PROXY', 'http_proxy'];
  const set = name.find((n) => env[n]);
  const noProxy = env.NO_PROXY ?? env.no_proxy;
  if (!set) return { name: 'proxy', ok: true, detail: 'none (direct connection)' };
  const host = new URL(c.url).hostname;
  const bypass = (noProxy ?? '')
    .split(',')
    .map((s) => s.trim().replace(/^\*?\./, ''))
    .some((h) => h === '*' || (h && (host === h || host.endsWith(`.${h}`))));
  return {
    name: 'proxy',
    ok: true,
    detail: bypass
      ? `${set} is set, but NO_PROXY excludes ${host}: direct`
      : `through ${safe(env[set] ?? '')} (${set})`,
  };
}

/**
 * `runner`: the reporter options found in the project's runner configs (see options.ts); they rank above
 * `CASEBRIDGE_*` and the config file, as in a run.
 */
export async function doctor(
  cwd: string,
  env: NodeJS.ProcessEnv,
  runner: CliOptions = { options: {}, notes: [] },
): Promise<Check[]> {
  const checks: Check[] = [];
  const loaded = loadConfig(runner.options, { env, cwd, ...(runner.source ? { inlineSource: runner.source } : {}) });
  const looked = `looked in: ${describeSearched(cwd, loaded.searched)}`;
  for (const note of runner.notes) checks.push({ name: 'runner config', ok: true, detail: note });
  for (const w of runner.warnings ?? []) checks.push({ name: 'runner config', ok: true, warning: true, detail: w });
  if (!loaded.ok) {
    checks.push({
      name: 'config',
      ok: false,
      detail: `${loaded.problems.join('; ')} (${looked})`,
      fix: loaded.problems.some((p) => p.includes('personal access token goes in token'))
        ? 'put the personal access token in CASEBRIDGE_TOKEN (sent as Bearer) and unset CASEBRIDGE_USER and CASEBRIDGE_PASSWORD; nothing was sent, so no failed login was counted'
        : 'set the options named above in casebridge.config.json (npx @casebridge/cli init writes one), as CASEBRIDGE_* variables, or in the reporter entry of the runner config; see the README',
    });
    return checks;
  }
  const c = loaded.config;
  checks.push({
    name: 'config',
    ok: true,
    detail: `mode ${c.mode}, project ${c.projectKey}${c.mode === 'cycle' ? `, test plan ${c.testPlan}` : ''} (from ${
      loaded.sources.map((s) => (relative(cwd, s) && !s.includes(' ') ? relative(cwd, s) : s)).join(', ') || 'defaults'
    }; ${looked})`,
  });
  checks.push(proxyCheck(c, env));
  if (c.caFile) {
    const file = resolve(cwd, c.caFile);
    const pem = existsSync(file) ? readFileSync(file, 'utf8') : '';
    checks.push(
      pem.includes('-----BEGIN CERTIFICATE-----')
        ? { name: 'ca file', ok: true, detail: `${file}` }
        : { name: 'ca file', ok: false, detail: `${file} is missing or not PEM`, fix: 'point caFile at a PEM file' },
    );
  }

  const { tm, repo } = clientsFor(c, undefined, {
    retry: { retries: 1, baseDelayMs: 200, maxDelayMs: 1_000, maxRetryAfterMs: 2_000 },
    timeouts: { connectMs: 5_000, headersMs: 10_000, bodyMs: 10_000 },
  });
  try {
    let signedIn = false;
    try {
      const me = await tm.jira.myself({});
      signedIn = true;
      checks.push({ name: 'credentials', ok: true, detail: `signed in to ${c.url} as ${me.name ?? me.displayName}` });
    } catch (err) {
      checks.push(reach(err, c, 'credentials'));
    }
    if (signedIn) {
      checks.push(await clock(tm.transport));
      try {
        const p = await tm.jira.project({ projectIdOrKey: c.projectKey });
        checks.push({ name: 'project', ok: true, detail: `${p.key} (${p.name})` });
      } catch (err) {
        checks.push(
          err instanceof NotFoundError
            ? {
                name: 'project',
                ok: false,
                detail: `project ${c.projectKey} was not found`,
                fix: 'check projectKey (CASEBRIDGE_PROJECT) and that the user can see the project',
              }
            : reach(err, c, 'project'),
        );
      }
      if (c.defects.enabled) checks.push(await defectScreenCheck(tm, c));
      if (c.mode === 'cycle') {
        const plan = c.testPlan as string;
        const name = cycleNameFor(c, env);
        try {
          const cycles = await tm.plans.cycles({ testPlanIssueKey: plan });
          checks.push({ name: 'test plan', ok: true, detail: `${plan} (${cycles.length} cycle(s))` });
          const cycle = cycles.find((x) => x.name === name);
          checks.push({
            name: 'cycle',
            ok: true,
            detail: cycle
              ? `"${name}" exists (id ${cycle.id}, ${cycle.status ?? 'Draft'})`
              : `"${name}" does not exist yet: the first run creates and starts it`,
          });
          checks.push(await statusMapCheck(tm, c, cycles));
        } catch (err) {
          checks.push(
            err instanceof NotFoundError
              ? {
                  name: 'test plan',
                  ok: false,
                  detail: `test plan ${plan} was not found`,
                  fix: 'check testPlan (CASEBRIDGE_TEST_PLAN): the key of an issue of type Test Plan',
                }
              : reach(err, c, 'test plan'),
          );
        }
      }
    }
    if (repo && c.repository) {
      try {
        const s = await repo.validateSession({});
        checks.push(
          s.isValidLogin
            ? {
                name: 'content repository',
                ok: true,
                detail: `${c.repository.url}: signed in${s.authorityName ? ` as ${s.authorityName}` : ''}`,
              }
            : {
                name: 'content repository',
                ok: false,
                detail: `${c.repository.url}: the session is not valid (${s.statusCode})`,
                fix: 'check the repository credentials (CASEBRIDGE_REPOSITORY_TOKEN, or repository.user/password/ticket)',
              },
        );
      } catch (err) {
        const r = reach(err, { ...c, url: c.repository.url }, 'content repository');
        checks.push({
          ...r,
          name: 'content repository',
          fix: r.fix?.replace(/CASEBRIDGE_TOKEN/g, 'CASEBRIDGE_REPOSITORY_TOKEN'),
        });
      }
    }
  } finally {
    await tm.close();
    await repo?.close();
  }
  checks.push(mappingCheck(c, cwd));
  // The pull request's targets (bitbucket, gitlab, github): one read each proves the token and the place.
  const targets = targetsOf(c, env);
  if (anyTarget(targets)) {
    const probed = await probeTargets(targets, { commit: await commitOf(env, cwd), client: clientSettings(c) });
    for (const p of probed) {
      checks.push(
        p.ok
          ? { name: `pull request (${p.host})`, ok: true, detail: p.line }
          : {
              name: `pull request (${p.host})`,
              ok: false,
              detail: p.line,
              fix: FIXES[p.host],
            },
      );
    }
  }
  return checks;
}

const FIXES: Record<'bitbucket' | 'gitlab' | 'github', string> = {
  bitbucket:
    'check CASEBRIDGE_BITBUCKET_URL, _TOKEN (an HTTP access token with repository read and write) and _REPO (PROJECT/slug); the commit: CASEBRIDGE_COMMIT',
  gitlab: 'check CASEBRIDGE_GITLAB_TOKEN (api scope), CI_SERVER_URL, CI_PROJECT_ID and CI_MERGE_REQUEST_IID',
  github:
    'check the token (GITHUB_TOKEN with pull-requests: write, or CASEBRIDGE_GITHUB_TOKEN), GITHUB_API_URL, GITHUB_REPOSITORY and the pull request',
};

/**
 * The create screen of the defect issue type against `defects.fields`: every required field (but those casebridge
 * sets, and priority when Jira has a default) given, every given field on the screen, values among the allowed
 * ones. Jira DC 8.4+'s createmeta, else the older one; a service with neither is a warning.
 */
async function defectScreenCheck(tm: TestManagementClient, c: CasebridgeConfig): Promise<Check> {
  const name = 'defect fields';
  const project = c.defects.projectKey ?? c.projectKey;
  const type = c.defects.issueType;
  const where = `the ${type} create screen of ${project}`;
  let screen: ScreenField[] | undefined;
  try {
    const types = await tm.jira.createMetaIssueTypes({ projectIdOrKey: project, maxResults: 1000 });
    const it = types.values.find((t) => t.name.toLowerCase() === type.toLowerCase());
    if (!it) {
      return {
        name,
        ok: false,
        detail: `issue type ${type} cannot be created in ${project} (${types.values.map((t) => t.name).join(', ')})`,
        fix: 'set defects.issueType to one of the types listed',
      };
    }
    screen = [];
    for (let startAt = 0; startAt < 10_000; ) {
      const page = await tm.jira.createMetaFields({
        projectIdOrKey: project,
        issueTypeId: it.id,
        startAt,
        maxResults: 1000,
      });
      screen.push(...page.values);
      startAt += page.values.length;
      if (page.isLast || page.values.length === 0) break;
    }
  } catch (err) {
    if (!(err instanceof NotFoundError)) return reach(err, c, name);
  }
  if (!screen) {
    // Before Jira 8.4 (or a proxy that hides the new resources): the older createmeta.
    try {
      const old = await tm.jira.createMeta({ projectKeys: project, expand: 'projects.issuetypes.fields' });
      const it = old.projects[0]?.issuetypes.find((t) => t.name.toLowerCase() === type.toLowerCase());
      if (it?.fields) screen = Object.entries(it.fields).map(([id, f]) => ({ ...f, fieldId: f.fieldId ?? id }));
    } catch (err) {
      if (!(err instanceof NotFoundError)) return reach(err, c, name);
    }
  }
  if (!screen) {
    return {
      name,
      ok: true,
      warning: true,
      detail: `not checked: the service does not describe ${where} (createmeta answered 404)`,
    };
  }
  const problems = screenProblems(screen, c.defects.fields);
  if (problems.length === 0) {
    const given = Object.keys(c.defects.fields ?? {});
    return { name, ok: true, detail: `${where} takes ${given.length ? given.join(', ') : 'the defects as they are'}` };
  }
  return {
    name,
    ok: false,
    detail: `${where}: ${problems.map((p) => p.problem).join('; ')} (Jira would refuse every defect)`,
    fix: problems.map((p) => p.fix).join('; '),
  };
}

function mappingCheck(c: CasebridgeConfig, cwd: string): Check {
  const file = resolve(cwd, c.mappingFile);
  if (!existsSync(file)) return { name: 'mapping file', ok: true, detail: `${c.mappingFile}: none (keys from titles)` };
  try {
    const value: unknown = JSON.parse(readFileSync(file, 'utf8'));
    const re = keyPattern(c.keyPattern ? { pattern: c.keyPattern } : { projectKeys: [c.projectKey] });
    const problems = mappingProblems(value, re);
    if (problems.length) {
      return { name: 'mapping file', ok: false, detail: problems.join('; '), fix: `correct ${c.mappingFile}` };
    }
    return {
      name: 'mapping file',
      ok: true,
      detail: `${c.mappingFile}: ${Object.keys(value as object).length} test(s)`,
    };
  } catch (err) {
    return {
      name: 'mapping file',
      ok: false,
      detail: `${c.mappingFile} is not valid JSON (${(err as Error).message})`,
      fix: `correct ${c.mappingFile}`,
    };
  }
}

/** Clock skew: the server's Date header against this machine's clock. */
async function clock(transport: TestManagementClient['transport']): Promise<Check> {
  try {
    const res = await transport.send({
      operation: 'doctor.clock',
      method: 'GET',
      path: '/',
      headers: {},
      creates: false,
    });
    const date = res.headers.date;
    const server = Date.parse(Array.isArray(date) ? (date[0] ?? '') : (date ?? ''));
    if (Number.isNaN(server))
      return { name: 'clock', ok: true, warning: true, detail: 'the server sent no Date header' };
    const skew = Math.round((Date.now() - server) / 1000);
    return Math.abs(skew) <= MAX_SKEW_S
      ? { name: 'clock', ok: true, detail: `within ${Math.max(1, Math.abs(skew))} s of the server` }
      : {
          name: 'clock',
          ok: false,
          detail: `this machine's clock is ${Math.abs(skew)} s ${skew > 0 ? 'ahead of' : 'behind'} the server's`,
          fix: 'synchronise the clock (NTP): run times and cycle dates would be off',
        };
  } catch (err) {
    return { name: 'clock', ok: true, warning: true, detail: `not checked (${(err as Error).message})` };
  }
}
