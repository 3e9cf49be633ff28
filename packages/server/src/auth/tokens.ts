import { createHash, randomBytes } from 'node:crypto';

/** Every agent token starts with this. */
export const TOKEN_PREFIX = 'svc_';
/** Random bytes behind a token: 256 bits, 43 base64url characters. */
const TOKEN_BYTES = 32;
/** Characters kept for display (`svc_` + 8), enough to tell tokens apart, useless for guessing. */
const DISPLAY_PREFIX_LENGTH = 12;
// Exact shape, no trimming: quotes or whitespace around a pasted token make it malformed.
const TOKEN_RE = /^svc_[A-Za-z0-9_-]{43}$/;
// Exactly "Bearer <token>": scheme case-insensitive, one space, rest taken verbatim.
const BEARER_RE = /^bearer (.+)$/is;

export interface GeneratedToken {
  /** The secret, shown to the user once and never stored. */
  token: string;
  /** The first characters, stored for listings. */
  prefix: string;
  /** sha256 hex of the token: what the store keeps. */
  hash: string;
}

/** A new random agent token with its display prefix and storage hash. */
export function generateToken(): GeneratedToken {
  const token = TOKEN_PREFIX + randomBytes(TOKEN_BYTES).toString('base64url');
  return { token, prefix: token.slice(0, DISPLAY_PREFIX_LENGTH), hash: hashToken(token) };
}

/** sha256 hex of a token. Tokens carry 256 random bits, so a plain fast hash is enough (no salt, no KDF). */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** True when the string has the exact token shape: `svc_` and 43 base64url characters, nothing around it. */
export function isWellFormedToken(token: string): boolean {
  return TOKEN_RE.test(token);
}

/** The token of an `Authorization: Bearer <token>` header value, untrimmed; undefined for any other shape. */
export function parseBearer(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return BEARER_RE.exec(header)?.[1];
}
