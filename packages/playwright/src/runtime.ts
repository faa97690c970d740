import { createRequire } from 'node:module';

/**
 * The runtime API inside a Playwright test: the same three calls as in the Vitest and Jest packages, on Playwright's
 * own mechanisms (annotations, `test.step`, `testInfo.attach`), which reach the reporter from any worker.
 * `@playwright/test` is loaded on the first call, from where this package was installed (beside the user's copy), so
 * importing this module never loads a second Playwright.
 */

type PlaywrightTest = {
  info(): {
    annotations: Array<{ type: string; description?: string }>;
    attach(name: string, options: { path?: string; body?: string | Buffer; contentType?: string }): Promise<void>;
  };
  step<T>(title: string, body: () => T | Promise<T>): Promise<T>;
};

/** The annotation `param` records, read by translate.ts. */
export const PARAM_ANNOTATION = 'casebridge.param';

let loaded: PlaywrightTest | undefined;
function playwright(): PlaywrightTest {
  loaded ??= (createRequire(import.meta.url)('@playwright/test') as { test: PlaywrightTest }).test;
  return loaded;
}

/** Outside a running test `test.info()` throws: then there is nothing to record to. */
function info() {
  try {
    return playwright().info();
  } catch {
    return undefined;
  }
}

/** Declares the case keys of the running test (in addition to keys in its title, tags and annotations). */
export function caseKey(...keys: string[]): void {
  const i = info();
  if (!i) return;
  for (const key of keys.map((k) => String(k).trim()).filter(Boolean)) {
    if (!i.annotations.some((a) => a.type === 'testCase' && a.description === key)) {
      i.annotations.push({ type: 'testCase', description: key });
    }
  }
}

/**
 * Names the requirements (stories, epics) the running test verifies: `requirement` annotations, the same as
 * `{ type: 'requirement', description: 'PROJ-5' }` in the test's details; the reporter links its case to each.
 */
export function requirement(...keys: string[]): void {
  const i = info();
  if (!i) return;
  for (const key of keys.map((k) => String(k).trim()).filter(Boolean)) {
    if (!i.annotations.some((a) => a.type === 'requirement' && a.description === key)) {
      i.annotations.push({ type: 'requirement', description: key });
    }
  }
}

/**
 * Names a parameter of the running test (a data-driven test's row: `param('locale', 'de')`), for the
 * `${param.<name>}` template of option `attributes`: an annotation `casebridge.param` (`name=value`) the reporter
 * reads back.
 */
export function param(name: string, value: unknown): void {
  const i = info();
  const n = String(name).trim();
  if (!i || !n) return;
  i.annotations.push({ type: PARAM_ANNOTATION, description: `${n}=${String(value)}` });
}

/** Runs `body` as a step (`test.step`): its status, duration and error reach the run's steps. */
export function step<T>(title: string, body: () => T | Promise<T>): Promise<T> {
  if (!info()) return Promise.resolve().then(body);
  return playwright().step(title, body);
}

/** Attaches a file or bytes to the running test (or the step it runs in): they become run attachments. */
export async function attach(
  name: string,
  content: { path: string; contentType?: string } | { body: string | Uint8Array; contentType?: string },
): Promise<void> {
  const i = info();
  if (!i) return;
  if ('path' in content) await i.attach(name, { path: content.path, contentType: content.contentType });
  else {
    const body = typeof content.body === 'string' ? content.body : Buffer.from(content.body);
    await i.attach(name, { body, contentType: content.contentType ?? 'application/octet-stream' });
  }
}
