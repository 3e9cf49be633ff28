export { generateToken, hashToken, isWellFormedToken, parseBearer, TOKEN_PREFIX, type GeneratedToken } from './tokens.js';
export {
  createAuthenticator,
  createBearerAuthenticator,
  TOUCH_INTERVAL_MS,
  type Authenticator,
  type AuthenticatorOptions,
  type Identity,
} from './authenticate.js';
export { AccountInputError, createAccountWithToken, FIRST_TOKEN_DESCRIPTION, type NewAccountInput } from './accounts.js';
