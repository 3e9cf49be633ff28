import { sign, type KeyObject } from 'node:crypto';
import type { Session } from './session-cookie.js';

/** Lifetime of an X-Svc-Identity token. */
export const IDENTITY_TTL_MS = 5 * 60_000;
/** A cached token is replaced this long before it expires, so the local service never sees a stale one. */
const REFRESH_BEFORE_MS = 60_000;
const MAX_CACHED = 10_000;

/** Where tokens get their key: the key ring's key of the moment (it changes at a rotation). */
export interface TokenSigner {
  signingKey(now: number): { kid: string; privateKey: KeyObject };
}

/**
 * X-Svc-Identity: an ES256 JWT (kid, iss the apex URL, aud the tunnel host, sub, email, exp within
 * five minutes). Signing costs tens of µs, so each session's token is made once and reused for
 * most of its life, keyed by the session cookie's value; a token of a key no longer signing with
 * is made again, so a rotation shows in the next request.
 */
export class IdentityTokens {
  private readonly cached = new Map<string, { token: string; kid: string; refreshAt: number }>();
  private readonly headers = new Map<string, string>();

  constructor(
    private readonly signer: TokenSigner,
    private readonly issuer: () => string,
  ) {}

  /** The token for a session (its cookie value is the cache key). */
  tokenFor(cookie: string, session: Session, now: number): string {
    const key = this.signer.signingKey(now);
    const hit = this.cached.get(cookie);
    if (hit !== undefined && hit.refreshAt > now && hit.kid === key.kid) return hit.token;
    const expiresAt = Math.min(now + IDENTITY_TTL_MS, session.expiresAt);
    const claims = {
      iss: this.issuer(),
      aud: session.host,
      sub: session.sub,
      email: session.email,
      iat: Math.floor(now / 1000),
      exp: Math.floor(expiresAt / 1000),
    };
    const input = `${this.headerOf(key.kid)}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    const signature = sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
    const token = `${input}.${signature.toString('base64url')}`;
    if (this.cached.size >= MAX_CACHED) this.cached.clear();
    this.cached.set(cookie, {
      token,
      kid: key.kid,
      refreshAt: Math.min(expiresAt - REFRESH_BEFORE_MS, now + IDENTITY_TTL_MS - REFRESH_BEFORE_MS),
    });
    return token;
  }

  /** Forgets the token of a session cookie (signed out). */
  forget(cookie: string): void {
    this.cached.delete(cookie);
  }

  private headerOf(kid: string): string {
    let header = this.headers.get(kid);
    if (header === undefined) {
      header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid })).toString('base64url');
      this.headers.set(kid, header);
    }
    return header;
  }
}
