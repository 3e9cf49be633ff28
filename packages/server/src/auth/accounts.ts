import { PLANS, type Account, type Store } from '../store/index.js';
import { hashPassword } from './password.js';
import { generateToken } from './tokens.js';

/** Description of the token created together with an account. */
export const FIRST_TOKEN_DESCRIPTION = 'first token';
const MAX_EMAIL_LENGTH = 254;
const MAX_NAME_LENGTH = 100;
// Deliberately loose: one @, no whitespace or quotes, dot-separated domain
// labels. `local@svcrouter.localhost` and `me@localhost` are fine on a laptop.
const EMAIL_RE = /^[^\s@"'<>]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/;

/** Invalid input to createAccountWithToken; the message says which field and why. */
export class AccountInputError extends Error {
  readonly code = 'ACCOUNT_INPUT_INVALID';

  constructor(message: string) {
    super(message);
    this.name = 'AccountInputError';
  }
}

export interface NewAccountInput {
  email: string;
  /** Default: the part of the email before the @. */
  name?: string | undefined;
  /** Default: free. */
  plan?: string | undefined;
}

/** Creates an account without a token (dashboard sign-up). Throws AccountInputError on bad input, StoreConflictError when the email is taken. */
export async function createAccount(store: Pick<Store, 'accounts'>, input: NewAccountInput): Promise<Account> {
  const email = input.email.toLowerCase();
  if (email.length > MAX_EMAIL_LENGTH || !EMAIL_RE.test(email)) {
    throw new AccountInputError(`invalid email: ${JSON.stringify(input.email)}`);
  }
  const name = (input.name ?? email.slice(0, email.indexOf('@'))).trim();
  if (name.length === 0 || name.length > MAX_NAME_LENGTH) {
    throw new AccountInputError(`invalid name: expected 1-${MAX_NAME_LENGTH} characters`);
  }
  const plan = PLANS.find((p) => p === (input.plan ?? 'free'));
  if (plan === undefined) throw new AccountInputError(`invalid plan: expected one of ${PLANS.join(', ')}`);
  return store.accounts.create({ email, name, plan });
}

/**
 * Creates an account and its first agent token. The token is returned once and
 * never stored. Throws AccountInputError on bad input and StoreConflictError
 * when the email is taken.
 */
export async function createAccountWithToken(store: Store, input: NewAccountInput): Promise<{ account: Account; token: string }> {
  const account = await createAccount(store, input);
  const { token, prefix, hash } = generateToken();
  // Two writes, no transaction (the Store exposes none). The insert can only
  // fail if the database goes away (a 256-bit hash never collides); the caller
  // then sees the error, and the account exists without a token.
  await store.keys.insert({ accountId: account.id, description: FIRST_TOKEN_DESCRIPTION, prefix, tokenHash: hash });
  return { account, token };
}

/**
 * Sets the account's password (checked against passwordProblem by the caller) and signs out
 * every other browser of the account: whoever knew the old password loses its sessions.
 * `keepSessionHash` is the session that made the change, if any.
 */
export async function setAccountPassword(
  store: Pick<Store, 'accounts' | 'sessions'>,
  accountId: string,
  password: string,
  keepSessionHash?: string,
): Promise<void> {
  await store.accounts.setPasswordHash(accountId, await hashPassword(password));
  await store.sessions.deleteForAccount(accountId, keepSessionHash);
}
