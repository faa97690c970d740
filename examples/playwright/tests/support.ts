import { existsSync } from 'node:fs';
import { expect, type Page } from '@playwright/test';

/** Playwright cannot download its own browsers on every machine: the example drives the system's Chromium. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(chromiumPath);
export const noChromium = `Chromium not found at ${chromiumPath}: browser tests skipped`;

/** Signs in as the demo user (no test.step: the case steps of the test stay the test's own). */
export async function logIn(page: Page): Promise<void> {
  await page.goto('/login');
  await page.getByLabel('User name').fill('demo');
  await page.getByLabel('Password').fill('demo');
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();
}
