import { randomBytes } from 'node:crypto';
import type { OidcRepo } from '../store/index.js';
import type { Sealer } from './signing-keys.js';

/** The purpose of the cookie key in the store. */
const COOKIE_PURPOSE = 'session-hmac';

/**
 * The HMAC-SHA256 key of session cookies, the same on every node (kept in the store, not in
 * memory alone), sealed there as the signing keys are (whoever reads the database alone cannot
 * forge a session cookie), created on first use: the first node to store one wins. A key kept in
 * clear before migration 023 is adopted: sealed, stored, and only then its clear row deleted, so
 * a node starting meanwhile finds one copy or the other and every node keeps the same key (the
 * cookies already issued stay valid). The ES256 keys of X-Svc-Identity have a schedule of their
 * own (key-ring.ts).
 */
export async function loadCookieKey(repo: OidcRepo, sealer: Sealer): Promise<Buffer> {
  const clear = await repo.clearKey(COOKIE_PURPOSE);
  const plain = clear?.secret ?? randomBytes(32).toString('base64url');
  const stored = await repo.sealedKey(COOKIE_PURPOSE, { keyId: clear?.keyId ?? 'hmac', sealedSecret: sealer.seal(plain) });
  if (clear !== undefined) await repo.forgetClearKey(COOKIE_PURPOSE);
  try {
    return Buffer.from(sealer.open(stored.sealedSecret), 'base64url');
  } catch {
    throw new Error(
      'the session cookie key cannot be opened: it was sealed with another secret key (SVC_WEBHOOK_KEY, SVC_CLUSTER_SECRET or <data dir>/webhook.key must be the same on every node)',
    );
  }
}
