import type { OperationDef } from '@casebridge/core/contract';
import { ANSWERED, type Answered, type Env, type ServiceExchange } from '../kernel/exchange.js';
import { sendError } from '../kernel/send.js';
import { authenticate, captchaHeaders, GUEST, PUBLIC_OPERATIONS } from '../service/auth.js';
import { ServiceError } from '../service/context.js';
import type { User } from '../store/store.js';

/** Who sent the request. */
export interface Caller {
  /** Undefined: an anonymous caller of a public operation. */
  user: User | undefined;
  /** A content-repository request without credentials, run as the guest. */
  isGuest: boolean;
}

/**
 * The auth step. Credentials are required except for the public operations; a content-repository request without
 * any runs as the guest when the guest is enabled and the request does not say `DisableGuest: true`. Refused: 401
 * (the repository's with an empty body, like edu-sharing).
 */
export function auth(env: Env, x: ServiceExchange, op: OperationDef): Caller | Answered {
  const { req, res, service } = x;
  const result = authenticate(env.store, service, req.headers, {
    ...(x.node !== undefined ? { node: x.node } : {}),
    patAsBasic: env.jira.patAsBasic,
  });
  if (result.ok) {
    x.entry.user = result.user.name;
    return { user: result.user, isGuest: false };
  }
  if (
    service === 'repo' &&
    result.reason === 'missing' &&
    env.repoGuest &&
    String(req.headers.disableguest ?? req.headers['disable-guest'] ?? '').toLowerCase() !== 'true'
  ) {
    x.entry.user = GUEST.name;
    return { user: GUEST, isGuest: true };
  }
  if (result.reason === 'captcha') {
    // Jira's answer after too many failed logins: 403 naming the CAPTCHA, until the user logs in in a browser.
    req.resume();
    sendError(
      res,
      service,
      op,
      new ServiceError(
        403,
        `CAPTCHA_CHALLENGE: user ${result.user.name} must log in through the browser (${x.origin}/login.jsp) after failed logins`,
      ),
      captchaHeaders(x.origin),
    );
    return ANSWERED;
  }
  if (PUBLIC_OPERATIONS.has(op.id)) return { user: undefined, isGuest: false };
  req.resume();
  if (service === 'bitbucket' || service === 'gitlab' || service === 'github') {
    const [message, error] = CODE_HOST_401[service][result.reason === 'missing' ? 0 : 1];
    sendError(res, service, op, new ServiceError(401, message, error ? { error } : {}));
    return ANSWERED;
  }
  if (service === 'repo') {
    res.writeHead(401, { 'content-length': '0' });
    res.end();
    return ANSWERED;
  }
  const message =
    result.reason === 'missing'
      ? 'You are not authenticated. Authentication required to perform this operation.'
      : 'Invalid credentials: the user name, password or token was not accepted.';
  sendError(res, service, op, new ServiceError(401, message), {
    'www-authenticate': 'Basic realm="protected-area"',
    'x-seraph-loginreason': 'AUTHENTICATED_FAILED',
  });
  return ANSWERED;
}

/** Each code host's 401: without a token, and with one it does not know ([message, Bitbucket's exception]). */
const CODE_HOST_401: Record<'bitbucket' | 'gitlab' | 'github', [[string, string?], [string, string?]]> = {
  bitbucket: [
    ['You are not permitted to access this resource', 'com.atlassian.bitbucket.AuthorisationException'],
    [
      'Authentication failed. Please check your credentials and try again.',
      'com.atlassian.bitbucket.auth.IncorrectPasswordAuthenticationException',
    ],
  ],
  gitlab: [['401 Unauthorized'], ['401 Unauthorized']],
  github: [['Requires authentication'], ['Bad credentials']],
};

/** The licence step: the test-management add-on refuses a user without a licence (403). */
export function licence(x: ServiceExchange, op: OperationDef, caller: Caller): Answered | undefined {
  if (x.service !== 'tm' || !caller.user || caller.user.licensed) return undefined;
  x.req.resume();
  sendError(
    x.res,
    x.service,
    op,
    new ServiceError(
      403,
      `User ${caller.user.name} is not authorised: no valid licence for the test-management add-on`,
    ),
  );
  return ANSWERED;
}
