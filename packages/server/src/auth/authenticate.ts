import { timingSafeEqual } from 'node:crypto';
import type { Account, KeyRecord, Store } from '../store/index.js';
import { hashToken, isWellFormedToken, parseBearer } from './tokens.js';

/** Minimum time between two lastUsedAt writes for one key. */
export const TOUCH_INTERVAL_MS = 60_000;

/** Who a valid token belongs to. */
export interface Identity {
  account: Account;
  key: KeyRecord;
}

/** Resolves a token to its identity; undefined for missing, malformed, unknown or revoked tokens. */
export type Authenticator = (token: string | undefined) => Promise<Identity | undefined>;

/** Resolves an `Authorization` header value (`Bearer <token>`) to its identity, as the API and the edge need. */
export type Authenticate = (authorization: string | undefined) => Promise<Identity | undefined>;

export interface AuthenticatorOptions {
  /** Clock for the touch throttle and lastUsedAt. Default Date.now. */
  now?: () => number;
  /** Receives failures of the background lastUsedAt write. Default: ignored (the next use retries). */
  onTouchError?: (err: unknown) => void;
}

/** Builds the token check used by the API and the edge; one instance per process holds the touch throttle. */
export function createAuthenticator(store: Store, opts: AuthenticatorOptions = {}): Authenticator {
  const now = opts.now ?? Date.now;
  const onTouchError = opts.onTouchError ?? (() => {});
  // keyId -> when this process last wrote lastUsedAt. Bounded by the number
  // of keys that authenticate, which is small next to the request count.
  const lastTouch = new Map<string, number>();

  // Not awaited: a lastUsedAt write must never delay or fail a request.
  // Ordering between concurrent touches is fixed up by the store (latest wins).
  function touch(keyId: string): void {
    const at = now();
    const last = lastTouch.get(keyId);
    if (last !== undefined && at - last < TOUCH_INTERVAL_MS) return;
    lastTouch.set(keyId, at);
    store.keys.touch(keyId, at).catch((err: unknown) => {
      // Forget the mark so the next request retries the write.
      if (lastTouch.get(keyId) === at) lastTouch.delete(keyId);
      onTouchError(err);
    });
  }

  return async (token) => {
    // Malformed input never reaches the database.
    if (token === undefined || !isWellFormedToken(token)) return undefined;
    const hash = hashToken(token);
    const key = await store.keys.byTokenHash(hash);
    if (!key) return undefined;
    // The lookup matched by index; compare again in constant time so the
    // answer does not depend on how much of the hash matched.
    const expected = Buffer.from(key.tokenHash, 'utf8');
    const actual = Buffer.from(hash, 'utf8');
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined;
    if (key.revokedAt !== undefined) return undefined;
    const account = await store.accounts.byId(key.accountId);
    if (!account) return undefined;
    touch(key.id);
    return { account, key };
  };
}

/** Like createAuthenticator, but takes the raw `Authorization` header value (`Bearer <token>`). */
export function createBearerAuthenticator(store: Store, opts: AuthenticatorOptions = {}): Authenticate {
  const authenticate = createAuthenticator(store, opts);
  return (authorization) => authenticate(parseBearer(authorization));
}
