import { randomBytes } from 'node:crypto';
import { hashToken } from './tokens.js';

/** Random bytes behind session and link tokens: 256 bits, 43 base64url characters. */
const SECRET_BYTES = 32;

/** A new prefixed random secret (`svs_…`, `svl_…`) and the sha256 hex the store keeps. */
export function newSecret(prefix: string): { token: string; hash: string } {
  const token = prefix + randomBytes(SECRET_BYTES).toString('base64url');
  return { token, hash: hashToken(token) };
}

/** Whether `token` has the exact shape newSecret gives with this prefix; malformed input never reaches the store. */
export function isSecretShape(token: string, prefix: string): boolean {
  return token.length === prefix.length + 43 && token.startsWith(prefix) && /^[A-Za-z0-9_-]{43}$/.test(token.slice(prefix.length));
}
