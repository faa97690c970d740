export type { AuthOptions } from './auth.js';
export { authSchema, looksLikePersonalAccessToken } from './auth.js';
export type { CallOptions, ClientOptions, InputOf, Method, Methods, OutputOf, UploadMethod } from './base.js';
export { parseClientOptions, ServiceClient } from './base.js';
export {
  AbortedError,
  AmbiguousError,
  CaptchaError,
  CasebridgeError,
  type CasebridgeErrorOptions,
  ConfigError,
  ERROR_BRAND,
  type ErrorKind,
  errorCodeOf,
  excerpt,
  ForbiddenError,
  HttpError,
  InputError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  type RequestInfo,
  ResponseShapeError,
  TimeoutError,
  type TimeoutPhase,
  UnauthorizedError,
  ValidationError,
} from './errors.js';
export { JIRA, JiraClient } from './jira.js';
export type { FileInput } from './multipart.js';
export { ContentRepositoryClient, type StoreFileOptions } from './repo.js';
export { isResultWindowRefusal } from './retry-policy.js';
export { redact, registerSecret } from './secrets.js';
export { TestManagementClient, TM_GROUPS, TM_PREFIX } from './tm.js';
export type { RetryOptions, TimeoutOptions, TransportStats } from './transport.js';
