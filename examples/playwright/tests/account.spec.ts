import { expect, test } from '@playwright/test';
import { hasChromium, logIn, noChromium } from './support';

test.skip(!hasChromium, noChromium);

// The case key in the title; the steps match DEMO-2's three case steps by text.
test('DEMO-2 logs in with valid credentials', async ({ page }) => {
  await test.step('Open the login page', async () => {
    await page.goto('/login');
    await expect(page.getByRole('form', { name: 'Login form' })).toBeVisible();
  });
  await test.step('Enter user name and password', async () => {
    await page.getByLabel('User name').fill('demo');
    await page.getByLabel('Password').fill('demo');
  });
  await test.step('Press "Log in"', async () => {
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();
  });
});

// The key in brackets in the title.
test('[DEMO-3] logs out from the user menu', async ({ page }) => {
  await logIn(page);
  await test.step('Open the user menu', async () => {
    await page.getByText('User menu').click();
    await expect(page.getByRole('menuitem', { name: 'Log out' })).toBeVisible();
  });
  await test.step('Choose "Log out"', async () => {
    await page.getByRole('menuitem', { name: 'Log out' }).click();
    await expect(page.getByRole('heading', { name: 'Log in' })).toBeVisible();
  });
});

// The key as an annotation.
test('profile page shows the user name', {
  annotation: [
    { type: 'testCase', description: 'DEMO-6' },
    // The requirement it verifies: the reporter links the case to it.
    { type: 'requirement', description: 'DEMO-8' },
  ],
}, async ({ page }) => {
  await logIn(page);
  await page.goto('/profile');
  await expect(page.getByTestId('user-name')).toHaveText('Dana Demo');
});
