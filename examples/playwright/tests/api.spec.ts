import { expect, test } from '@playwright/test';

// No browser here: the `request` fixture talks to the web server directly, so these run without Chromium too.
test.describe('catalogue API', () => {
  // Flaky on purpose: the first attempt gives the slow answer too little time, the retry enough.
  test('DEMO-7 product list loads over a slow network', async ({ request }, testInfo) => {
    const timeout = testInfo.retry === 0 ? 100 : 5_000;
    const res = await request.get('/api/products?q=tea&delayMs=500', { timeout });
    expect(res.ok()).toBe(true);
    const body = (await res.json()) as { products: { name: string }[] };
    expect(body.products.map((p) => p.name)).toEqual(['Teapot', 'Teacup']);
  });

  // No case key anywhere: the summary lists it as unmapped.
  test('health endpoint answers ok', async ({ request }) => {
    const res = await request.get('/api/health');
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});
