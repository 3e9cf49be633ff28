import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { OidcSessionsRepo, OidcSigningKey } from '../store/index.js';
import { hasActiveKey } from './key-schedule.js';

/**
 * Seals private keys before they reach the store and opens them after (AES-256-GCM under a key
 * that is not in the database: webhooks/secret-box.ts, handed in by the composition root).
 */
export interface Sealer {
  seal(plain: string): string;
  /** Throws when the value was sealed under another key or altered. */
  open(sealed: string): string;
}

/** A signing key ready to use: the private key opened, the public JWK as the JWKS shows it. */
export interface OpenedKey {
  kid: string;
  createdAt: number;
  activeAt: number;
  privateKey: KeyObject;
  publicJwk: JsonWebKey;
}

/** A fresh ES256 key, sealed for the store, signed with from `activeAt`. */
export function newSigningKey(sealer: Sealer, createdAt: number, activeAt: number): OidcSigningKey {
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return storedKey(randomBytes(9).toString('base64url'), pair.privateKey, sealer, createdAt, activeAt);
}

/** Opens a stored key; throws (with the kid) when it was sealed under another key. */
export function openSigningKey(sealer: Sealer, stored: OidcSigningKey): OpenedKey {
  let privateJwk: string;
  try {
    privateJwk = sealer.open(stored.sealedKey);
  } catch {
    throw new Error(
      `signing key ${stored.kid} cannot be opened: it was sealed with another secret key (SVC_WEBHOOK_KEY, SVC_CLUSTER_SECRET or <data dir>/webhook.key must be the same on every node and for svc-server oidc)`,
    );
  }
  const privateKey = createPrivateKey({ key: JSON.parse(privateJwk) as JsonWebKey, format: 'jwk' });
  return {
    kid: stored.kid,
    createdAt: stored.createdAt,
    activeAt: stored.activeAt,
    privateKey,
    publicJwk: JSON.parse(stored.publicJwk) as JsonWebKey,
  };
}

/**
 * Makes sure a key is active now: adopts the key 013 stored in clear (sealing it, then deleting
 * the clear copy), or else stores a fresh one active at once (no token was signed yet, so there is
 * nothing to wait for). Nodes starting together may each add one; the schedule picks the same.
 */
export async function ensureActiveKey(repo: OidcSessionsRepo, sealer: Sealer, now: number): Promise<void> {
  const keys = await repo.signingKeys();
  if (hasActiveKey(keys, now)) return;
  const legacy = keys.length === 0 ? await repo.legacyKey() : undefined;
  if (legacy !== undefined) {
    const privateKey = createPrivateKey({ key: JSON.parse(legacy.privateJwk) as JsonWebKey, format: 'jwk' });
    await repo.addSigningKey(storedKey(legacy.kid, privateKey, sealer, legacy.createdAt, legacy.createdAt));
    await repo.forgetLegacyKey();
    return;
  }
  await repo.addSigningKey(newSigningKey(sealer, now, now));
}

function storedKey(kid: string, privateKey: KeyObject, sealer: Sealer, createdAt: number, activeAt: number): OidcSigningKey {
  const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' });
  return {
    kid,
    sealedKey: sealer.seal(JSON.stringify(privateKey.export({ format: 'jwk' }))),
    publicJwk: JSON.stringify({ ...publicJwk, kid, alg: 'ES256', use: 'sig' }),
    createdAt,
    activeAt,
  };
}
