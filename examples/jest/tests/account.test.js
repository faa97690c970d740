const { caseKey, requirement, step } = require('@casebridge/jest');
const { logIn, logOut } = require('../app/shop');

// The case key in the title; the steps match DEMO-2's three case steps by text.
test('DEMO-2 logs in with valid credentials', async () => {
  const form = await step('Open the login page', () => ({ user: '', password: '' }));
  await step('Enter user name and password', () => {
    form.user = 'demo';
    form.password = 'demo';
  });
  await step('Press "Log in"', () => {
    expect(logIn(form.user, form.password)).toMatchObject({ page: 'dashboard', loggedIn: true });
  });
});

// The key in brackets in the title.
test('[DEMO-3] logs out from the user menu', async () => {
  const session = logIn('demo', 'demo');
  await step('Open the user menu', () => {
    expect(session.loggedIn).toBe(true);
  });
  await step('Choose "Log out"', () => {
    expect(logOut(session)).toMatchObject({ page: 'login', loggedIn: false });
  });
});

// The key declared from inside the test: Jest has no tags or annotations.
test('profile page shows the user name', () => {
  caseKey('DEMO-6');
  // Links the case to the requirement it verifies (once; links a person made stay).
  requirement('DEMO-8');
  expect(logIn('demo', 'demo').name).toBe('Dana Demo');
});
