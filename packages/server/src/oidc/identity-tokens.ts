import { sign } from 'node:crypto';
import type { SignInKeys } from './keys.js';
import type { Session } from './session-cookie.js';

/** Lifetime of an X-Svc-Identity token. */
export const IDENTITY_TTL_MS = 5 * 60_000;
/** A cached token is replaced this long before it expires, so the local service never sees a stale one. */
const REFRESH_BEFORE_MS = 60_000;
const MAX_CACHED = 10_000;

/**
 * X-Svc-Identity: an ES256 JWT (kid, iss the apex URL, aud the tunnel host, sub, email, exp within
 * five minutes). Signing costs tens of µs, so each session's token is made once and reused for
 * most of its life, keyed by the session cookie's value.
 */
export class IdentityTokens {
  private readonly cached = new Map<string, { token: string; refreshAt: number }>();
  private readonly header: string;

  constructor(
    private readonly keys: SignInKeys['identity'],
    private readonly issuer: () => string,
  ) {
    this.header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid: keys.kid })).toString('base64url');
  }

  /** The token for a session (its cookie value is the cache key). */
  tokenFor(cookie: string, session: Session, now: number): string {
    const hit = this.cached.get(cookie);
    if (hit !== undefined && hit.refreshAt > now) return hit.token;
    const expiresAt = Math.min(now + IDENTITY_TTL_MS, session.expiresAt);
    const claims = {
      iss: this.issuer(),
      aud: session.host,
      sub: session.sub,
      email: session.email,
      iat: Math.floor(now / 1000),
      exp: Math.floor(expiresAt / 1000),
    };
    const input = `${this.header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    const signature = sign('sha256', Buffer.from(input), { key: this.keys.privateKey, dsaEncoding: 'ieee-p1363' });
    const token = `${input}.${signature.toString('base64url')}`;
    if (this.cached.size >= MAX_CACHED) this.cached.clear();
    this.cached.set(cookie, { token, refreshAt: Math.min(expiresAt - REFRESH_BEFORE_MS, now + IDENTITY_TTL_MS - REFRESH_BEFORE_MS) });
    return token;
  }

  /** The JSON of GET /.well-known/jwks.json. */
  jwks(): string {
    return JSON.stringify({ keys: [this.keys.publicJwk] });
  }
}
