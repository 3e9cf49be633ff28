import type { Store } from '../store/index.js';
import { isSecretShape, newSecret } from './secret-tokens.js';
import { hashToken } from './tokens.js';

/** Every sign-in link token starts with this. */
export const LINK_TOKEN_PREFIX = 'svl_';
/** A link works this long after it is made, and once. */
export const LINK_LIFETIME_MS = 30 * 60 * 1000;

/** Path of the dashboard page a link opens; the token travels in the fragment, never to the server or in Referer. */
export const WELCOME_PATH = '/welcome';

/** A fresh one-time link token for the account; only its hash is stored. */
export async function createSignInLink(
  store: Pick<Store, 'signInLinks'>,
  accountId: string,
  now: () => number = Date.now,
): Promise<string> {
  const { token, hash } = newSecret(LINK_TOKEN_PREFIX);
  const at = now();
  await store.signInLinks.create({ tokenHash: hash, accountId, expiresAt: at + LINK_LIFETIME_MS });
  store.signInLinks.deleteExpired(at).catch(() => undefined);
  return token;
}

/** The account id of a valid link, marking it used; undefined when malformed, unknown, used or expired. */
export async function consumeSignInLink(
  store: Pick<Store, 'signInLinks'>,
  token: string,
  now: () => number = Date.now,
): Promise<string | undefined> {
  if (!isSecretShape(token, LINK_TOKEN_PREFIX)) return undefined;
  return store.signInLinks.consume(hashToken(token), now());
}

/** The URL a person opens: `<apex>/welcome#token=svl_…`. */
export function signInLinkUrl(apexUrl: string, token: string): string {
  return `${apexUrl}${WELCOME_PATH}#token=${token}`;
}
