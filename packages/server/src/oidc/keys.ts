import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { OidcRepo } from '../store/index.js';

/** The keys single sign-on signs with, the same on every node (kept in the store, not in memory alone). */
export interface SignInKeys {
  /** ES256 key of X-Svc-Identity. */
  identity: { kid: string; privateKey: KeyObject; publicJwk: JsonWebKey };
  /** HMAC-SHA256 key of session cookies. */
  cookie: Buffer;
}

/** Loads the shared keys, creating them on first use (the first node to store one wins). */
export async function loadSignInKeys(repo: OidcRepo): Promise<SignInKeys> {
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const identity = await repo.key('identity-es256', {
    keyId: randomBytes(9).toString('base64url'),
    secret: JSON.stringify(pair.privateKey.export({ format: 'jwk' })),
  });
  const cookie = await repo.key('session-hmac', { keyId: 'hmac', secret: randomBytes(32).toString('base64url') });
  const privateKey = createPrivateKey({ key: JSON.parse(identity.secret) as JsonWebKey, format: 'jwk' });
  const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' });
  return {
    identity: { kid: identity.keyId, privateKey, publicJwk: { ...publicJwk, kid: identity.keyId, alg: 'ES256', use: 'sig' } },
    cookie: Buffer.from(cookie.secret, 'base64url'),
  };
}
