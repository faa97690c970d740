import { expect, test } from '@playwright/test';
import { hasChromium, noChromium } from './support';

test.skip(!hasChromium, noChromium);

// The key as a tag.
test('search finds products by name', { tag: '@DEMO-4' }, async ({ page }) => {
  await page.goto('/shop');
  await test.step('Type a product name into search', async () => {
    await page.getByLabel('Search products').fill('teapot');
    await expect(page.locator('#suggestions option[value="Teapot"]')).toHaveCount(1);
  });
  await test.step('Submit the search', async () => {
    await page.getByRole('button', { name: 'Search' }).click();
    await expect(page.getByRole('list', { name: 'Results' }).getByRole('listitem')).toHaveText([/Teapot/]);
  });
});

// Fails on purpose: the demo shop declines saved cards (its known bug), so the report has a failed run with a
// failed third step, the error and the failure screenshot.
test('DEMO-5 checks out with a saved card', async ({ page }) => {
  await test.step('Add a product to the cart', async () => {
    await page.goto('/shop?q=teapot');
    await page.getByRole('button', { name: 'Add Teapot to cart' }).click();
    await expect(page.getByTestId('cart-count')).toHaveText('1 item(s)');
  });
  await test.step('Open checkout', async () => {
    await page.getByRole('link', { name: 'Checkout' }).click();
    await expect(page.getByLabel('Saved card •••• 4242')).toBeChecked();
  });
  await test.step('Place the order', async () => {
    await page.getByRole('button', { name: 'Place order' }).click();
    await expect(page.getByText(/Order number \d+/)).toBeVisible();
  });
});
