import { attach, caseKey, requirement, step } from '@casebridge/vitest';
import { describe, expect, test } from 'vitest';
import { Session } from '../src/shop';

describe('account', () => {
  // The case key in the title; the steps match DEMO-2's three case steps by text.
  test('DEMO-2 logs in with valid credentials', async () => {
    const session = new Session();
    await step('Open the login page', async () => {
      expect(session.user).toBeUndefined();
    });
    await step('Enter user name and password', async () => {
      expect(session.logIn('demo', 'demo')).toBe(true);
    });
    await step('Press "Log in"', async () => {
      expect(session.displayName).toBe('Dana Demo');
    });
  });

  // The key as an annotation (Vitest 3.2+): `annotate(key, 'testCase')`.
  test('logs out from the user menu', async ({ annotate }) => {
    await annotate('DEMO-3', 'testCase');
    const session = new Session();
    session.logIn('demo', 'demo');
    await step('Open the user menu', async () => {
      expect(session.user).toBe('demo');
    });
    await step('Choose "Log out"', async () => {
      session.logOut();
      expect(session.user).toBeUndefined();
    });
  });

  // The key declared from inside the test with the runtime API, and a file attached from the worker.
  test('profile page shows the user name', () => {
    caseKey('DEMO-6');
    requirement('DEMO-8'); // the requirement it verifies: its case is linked to it

    const session = new Session();
    session.logIn('demo', 'demo');
    attach('profile.json', { body: JSON.stringify({ user: session.displayName }), contentType: 'application/json' });
    expect(session.displayName).toBe('Dana Demo');
  });
});
