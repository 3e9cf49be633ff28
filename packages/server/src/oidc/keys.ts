import { randomBytes } from 'node:crypto';
import type { OidcRepo } from '../store/index.js';

/**
 * The HMAC-SHA256 key of session cookies, the same on every node (kept in the store, not in
 * memory alone), created on first use: the first node to store one wins. The ES256 keys of
 * X-Svc-Identity have a schedule of their own (key-ring.ts).
 */
export async function loadCookieKey(repo: OidcRepo): Promise<Buffer> {
  const cookie = await repo.key('session-hmac', { keyId: 'hmac', secret: randomBytes(32).toString('base64url') });
  return Buffer.from(cookie.secret, 'base64url');
}
