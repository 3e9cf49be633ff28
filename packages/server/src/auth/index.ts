// Who is calling: agent tokens (stored hashed), accounts and dashboard passwords, dashboard
// sessions and one-time sign-in links, and the failed sign-in limit.
// May use: hostname, store.
export { generateToken, hashToken, isWellFormedToken, parseBearer, TOKEN_PREFIX, type GeneratedToken } from './tokens.js';
export {
  createAuthenticator,
  createBearerAuthenticator,
  TOUCH_INTERVAL_MS,
  type Authenticate,
  type Authenticator,
  type AuthenticatorOptions,
  type Identity,
} from './authenticate.js';
export {
  AccountInputError,
  createAccount,
  createAccountWithToken,
  setAccountPassword,
  FIRST_TOKEN_DESCRIPTION,
  type NewAccountInput,
} from './accounts.js';
export {
  hashPassword,
  verifyPassword,
  burnVerification,
  passwordProblem,
  MIN_PASSWORD_LENGTH,
  MAX_PASSWORD_LENGTH,
  type ScryptCost,
} from './password.js';
export {
  SESSION_COOKIE,
  SECURE_SESSION_COOKIE,
  readCookie,
  readSessionCookie,
  sessionCookie,
  sessionCookieName,
  expiredSessionCookie,
  type SessionCookieOptions,
} from './cookies.js';
export {
  DashboardSessions,
  SESSION_LIFETIME_MS,
  SESSION_TOKEN_PREFIX,
  type NewSession,
  type SessionIdentity,
} from './dashboard-sessions.js';
export { createSignInLink, consumeSignInLink, signInLinkUrl, LINK_LIFETIME_MS, LINK_TOKEN_PREFIX, WELCOME_PATH } from './sign-in-links.js';
export { SignInLimiter, DEFAULT_SIGN_IN_LIMITS, type SignInLimits } from './sign-in-limiter.js';
