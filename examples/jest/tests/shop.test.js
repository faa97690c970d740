const { attach, step } = require('@casebridge/jest');
const { checkout, search } = require('../app/shop');

test('DEMO-4 search finds products by name', async () => {
  const results = await step('Type a product name into search', () => search('tea'));
  await step('Submit the search', () => {
    // Jest has no attachments of its own: this one reaches the run through the reporter.
    attach('results.json', { body: JSON.stringify(results, null, 2), contentType: 'application/json' });
    expect(results.map((p) => p.name)).toEqual(['Teapot', 'Teacup']);
  });
});

// Fails on purpose: the demo shop declines saved cards (its known bug), so the report has a failed run with a failed
// third step, the error, the receipt attached to that step, and a defect.
test('DEMO-5 checks out with a saved card', async () => {
  const cart = await step('Add a product to the cart', () => search('teapot'));
  await step('Open checkout', () => {
    expect(cart).toHaveLength(1);
  });
  await step('Place the order', () => {
    const receipt = checkout(cart, { savedCard: '4242' });
    attach('receipt.txt', { body: receipt.message ?? `Order number ${receipt.orderNumber}` });
    expect(receipt).toMatchObject({ ok: true });
  });
});
