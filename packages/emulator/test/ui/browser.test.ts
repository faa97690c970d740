import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useEmulator } from '../helpers.js';
import { ROOT } from '../spawn.js';
import { type FilledCycle, fillCycle, postReview, REVIEW_COMMIT, setResult } from './fixtures.js';

/**
 * The web UI in a real Chromium, as a person sees it: status text and colour, the failure screenshot loaded
 * inline, the defect link, keyboard navigation, the live update of an open cycle page, no page-level horizontal
 * scroll at 400 px, and axe-core finding nothing serious or critical. Screenshots go to test-results/ui/.
 */

// The callbacks of page.evaluate run in the browser; the repository compiles for Node (no DOM lib), so the few
// browser globals they use are declared here, for this module only.
declare const window: any;
declare const document: any;
declare function getComputedStyle(element: unknown): { backgroundColor: string; outlineStyle: string };

const CHROMIUM = '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
const SHOTS = join(ROOT, 'test-results', 'ui');
const COMMIT_PAGE = `/projects/DEMO/repos/shop/commits/${REVIEW_COMMIT}`;
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** A stand-in for the screenshot a Playwright reporter attaches to a failed test. */
const FAILURE_HTML = `<!doctype html><html><body style="margin:0;font:20px sans-serif;background:#fff">
  <div style="background:#0747a6;color:#fff;padding:16px 24px;font-weight:bold">Demo shop: Checkout</div>
  <div style="margin:32px 24px;padding:16px;border:2px solid #bf2600;background:#ffebe6;color:#bf2600">
    Payment declined: the saved card expired (12/25).</div>
  <div style="margin:0 24px;color:#172b4d">Order total: 42.00 EUR &nbsp; <button disabled>Place the order</button></div>
</body></html>`;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const violations = (await page.evaluate(
    async () => (await (window as any).axe.run(document, { resultTypes: ['violations'] })).violations,
  )) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

async function noHorizontalScroll(page: Page): Promise<{ scrollWidth: number; clientWidth: number }> {
  return page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
}

if (!HAS_CHROMIUM) console.warn(`browser tests skipped: ${CHROMIUM} is missing (apt-get install chromium)`);

describe.skipIf(!HAS_CHROMIUM)('web UI in Chromium (needs /usr/bin/chromium)', () => {
  const emu = useEmulator();
  let browser: Browser;
  let context: BrowserContext;
  let filled: FilledCycle;
  let shotWidth = 0;
  const cycleUrl = (query = '') => `${emu().url}/browse/DEMO-1?cycle=${filled.cycleId}${query}`;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu'],
    });
    // The failure screenshot is a real one, taken by this browser.
    const shooter = await browser.newPage({ viewport: { width: 640, height: 240 } });
    await shooter.setContent(FAILURE_HTML);
    const screenshot = await shooter.screenshot();
    shotWidth = 640;
    await shooter.close();
    await fillCycle(emu(), 'Nightly build 41');
    filled = await fillCycle(emu(), 'Nightly build 42', screenshot);
    await postReview(emu());
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('shows the home page: plans with the latest cycle, counts in text', async () => {
    const page = await context.newPage();
    await page.goto(`${emu().url}/`);
    expect(await page.locator('h1').textContent()).toBe('Projects and test plans');
    const row = page.locator('tr', { has: page.locator('a[href="/browse/DEMO-1"]') });
    expect(await row.locator('td').nth(0).textContent()).toBe('Release 1.0 regression');
    expect(await row.locator('a', { hasText: 'Nightly build 42' }).getAttribute('href')).toBe(
      `/browse/DEMO-1?cycle=${filled.cycleId}`,
    );
    expect(await row.locator('.counts li').allTextContents()).toEqual([
      'Passed 1',
      'Failed 1',
      'Blocked 1',
      'Not Tested 3',
    ]);
    await page.screenshot({ path: join(SHOTS, 'home.png'), fullPage: true });
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();
  });

  it('shows the failed run: status text and colour, the screenshot inline, the defect link', async () => {
    const page = await context.newPage();
    await page.goto(cycleUrl());
    const run = page.locator(`#run-${filled.failedRun}`);
    const badge = run.locator('.run-head .status');
    expect(await badge.textContent()).toBe('Failed');
    expect(await badge.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(208, 68, 55)');
    expect(await run.textContent()).toContain('expected "valid", got "expired"');
    expect(await run.textContent()).toContain('Payment declined: card expired');
    const img = run.locator('img[alt^="failure.png"]');
    await img.scrollIntoViewIfNeeded();
    await page.waitForFunction(
      (el) => (el as any).complete && (el as any).naturalWidth > 0,
      await img.elementHandle(),
      { timeout: 5000 },
    );
    expect(await img.evaluate((el) => (el as any).naturalWidth)).toBe(shotWidth);
    const defect = run.locator(`a[href="/browse/${filled.bugKey}"]`).first();
    expect(await defect.textContent()).toBe(filled.bugKey);
    await page.screenshot({ path: join(SHOTS, 'cycle-page.png'), fullPage: true });

    // Follow the defect, and from the defect back to the run's card.
    await defect.click();
    await page.waitForURL(`**/browse/${filled.bugKey}`);
    expect(await page.locator('h1').textContent()).toBe('Checkout refuses a saved card');
    await page.locator(`a[href$="#run-${filled.failedRun}"]`).click();
    await page.waitForURL(`**/browse/DEMO-1?cycle=${filled.cycleId}&run=${filled.failedRun}#run-${filled.failedRun}`);
    const box = await page.locator(`#run-${filled.failedRun}`).boundingBox();
    expect(box && box.y >= 0 && box.y < 900, 'the run is scrolled into view').toBe(true);
    await page.close();
  });

  it('filters the runs by status with a link', async () => {
    const page = await context.newPage();
    await page.goto(cycleUrl());
    expect(await page.locator('article.run').count()).toBe(6);
    await page.getByRole('link', { name: 'Failed (1)' }).click();
    await page.waitForURL(/status=Failed/);
    expect(await page.locator('article.run').count()).toBe(1);
    expect(await page.locator('article.run').getAttribute('id')).toBe(`run-${filled.failedRun}`);
    await page.setViewportSize({ width: 1100, height: 900 });
    await page.screenshot({ path: join(SHOTS, 'cycle-failed.png'), fullPage: true });
    await page.close();
  });

  it('can be used with the keyboard: skip link, visible focus, Tab to a link and Enter', async () => {
    const page = await context.newPage();
    await page.goto(`${emu().url}/`);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to main content');
    const skip = await page.locator('a.skip').boundingBox();
    expect(skip && skip.y >= 0, 'the focused skip link is on screen').toBe(true);
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    let found = false;
    for (let i = 0; i < 40 && !found; i++) {
      await page.keyboard.press('Tab');
      found = await page.evaluate(() => document.activeElement?.getAttribute('href') === '/browse/DEMO-1');
    }
    expect(found, 'Tab reaches the DEMO-1 link').toBe(true);
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
    expect(outline).toBe('solid');
    await page.keyboard.press('Enter');
    await page.waitForURL('**/browse/DEMO-1');
    expect(await page.locator('h1').textContent()).toBe('Release 1.0 regression');
    await page.close();
  });

  it('updates an open cycle page by itself when a run reports through the REST API', async () => {
    const page = await context.newPage();
    await page.goto(cycleUrl());
    const runId = filled.runs['DEMO-3'] as number;
    expect(await page.locator(`#run-${runId} .run-head .status`).textContent()).toBe('Not Tested');
    await page.evaluate(() => {
      (window as any).sameDocument = true;
    });
    // Let the event stream connect before the change.
    await page.waitForTimeout(300);
    await setResult(emu(), runId, 'Blocked', 'blocked while the page was open');
    await page.waitForFunction(
      (id) => document.querySelector(`#run-${id} .run-head .status`)?.textContent === 'Blocked',
      runId,
      { timeout: 5000 },
    );
    expect(await page.evaluate(() => (window as any).sameDocument)).toBe(true);
    expect(await page.locator(`#run-${runId}`).textContent()).toContain('blocked while the page was open');
    expect(await page.locator('#live-status').textContent()).toMatch(/^Runs updated at /);
    expect(await page.getByRole('link', { name: 'Blocked (2)' }).count()).toBe(1);
    await page.close();
  });

  it('shows a commit as a pull request shows it: the build, the report with its data, annotations by file', async () => {
    const page = await context.newPage();
    await page.goto(`${emu().url}/`);
    await page.getByRole('link', { name: REVIEW_COMMIT.slice(0, 11) }).click();
    expect(new URL(page.url()).pathname).toBe(COMMIT_PAGE);
    const builds = page.getByRole('region', { name: /^Build statuses/ });
    expect(await builds.locator('tbody tr').first().textContent()).toContain('FAILED');
    const report = page.locator('section', { has: page.getByRole('heading', { level: 3 }) }).first();
    expect(await report.getByRole('heading', { level: 3 }).textContent()).toContain('casebridge: FAIL <b>2 new</b>');
    expect(await report.locator('dt:text-is("Pass rate") + dd').textContent()).toBe('62.5%');
    expect(await report.getByRole('link', { name: 'Nightly 42' }).getAttribute('href')).toBe(
      'http://jira.example.test/c/7',
    );
    const checkout = page.getByRole('region', { name: /on tests\/checkout\.spec\.ts/ });
    expect(await checkout.locator('tbody th').allTextContents()).toEqual(['12', '42']);
    expect(await checkout.locator('tbody tr').nth(1).textContent()).toContain(
      'expected "valid", got <script>alert(1)</script>',
    );
    await page.screenshot({ path: join(SHOTS, 'commit.png'), fullPage: true });
    await page.close();
  });

  it('shows the requirements with their state, and picks another cycle with the form', async () => {
    const page = await context.newPage();
    await page.goto(`${emu().url}/`);
    await page.getByRole('link', { name: 'Requirements of DEMO and their coverage' }).click();
    expect(new URL(page.url()).pathname).toBe('/projects/DEMO/requirements');
    const row = (key: string) => page.getByRole('row', { name: new RegExp(`^${key} `) });
    expect(await row('DEMO-10').locator('td').nth(1).locator('.status').first().textContent()).toBe('failing');
    expect(await row('DEMO-9').locator('td').nth(1).locator('.status').first().textContent()).toBe('passing');
    // A child is indented under its parent, and says whose child it is in text.
    const indent = async (key: string) => (await row(key).locator('th').boundingBox())?.x ?? 0;
    expect(await row('DEMO-9').locator('th').textContent()).toContain(', child of DEMO-8');
    const parent = await row('DEMO-8').locator('th a').first().boundingBox();
    const child = await row('DEMO-9').locator('th a').first().boundingBox();
    expect((child?.x ?? 0) - (parent?.x ?? 0)).toBeGreaterThan(10);
    expect(await indent('DEMO-9')).toBe(await indent('DEMO-8'));
    await page.screenshot({ path: join(SHOTS, 'requirements.png'), fullPage: true });
    await page.getByLabel('Test cycle', { exact: true }).selectOption({ label: 'Nightly build 41 (Active)' });
    await page.getByRole('button', { name: 'Show coverage' }).click();
    await page.waitForURL(/cycle=\d+/);
    expect(await page.locator('main p').first().textContent()).toContain('Nightly build 41');
    await page.close();
  });

  it('has no page-level horizontal scroll at 400 px', async () => {
    const narrow = await browser.newContext({ viewport: { width: 400, height: 800 } });
    const page = await narrow.newPage();
    for (const path of [
      '/',
      `/browse/DEMO-1?cycle=${filled.cycleId}`,
      '/browse/DEMO-1',
      '/browse/DEMO-5',
      '/browse/DEMO-8',
      '/projects/DEMO/requirements',
      `/browse/${filled.bugKey}`,
      '/rehearsal/requests',
      '/rehearsal/faults',
      '/login.jsp',
      COMMIT_PAGE,
      '/demo/shop/-/merge_requests/1',
      '/demo/shop/pull/1',
    ]) {
      await page.goto(emu().url + path);
      const { scrollWidth, clientWidth } = await noHorizontalScroll(page);
      expect(scrollWidth, path).toBeLessThanOrEqual(clientWidth);
    }
    await page.goto(cycleUrl(`#run-${filled.failedRun}`));
    await page.screenshot({ path: join(SHOTS, 'cycle-400px.png') });
    await narrow.close();
  });

  it('passes axe-core without serious or critical violations', async () => {
    const page = await context.newPage();
    for (const path of [
      `/browse/DEMO-1?cycle=${filled.cycleId}`,
      `/browse/DEMO-1?cycle=${filled.cycleId}&status=Failed`,
      '/',
      '/browse/DEMO-1',
      '/browse/DEMO-5',
      '/browse/DEMO-8',
      '/browse/DEMO-10',
      '/projects/DEMO/requirements',
      '/projects/NOPE/requirements',
      `/browse/${filled.bugKey}`,
      '/rehearsal/requests',
      '/rehearsal/faults',
      '/rehearsal/reset',
      '/login.jsp',
      '/browse/NOPE-1',
      COMMIT_PAGE,
      '/demo/shop/-/merge_requests/1',
      '/demo/shop/pull/1',
      '/demo/nope/pull/1',
    ]) {
      await page.goto(emu().url + path);
      expect(await seriousViolations(page), path).toEqual([]);
    }
    await page.close();
  });
});
