import { createHmac } from 'node:crypto';
import { sameText } from '@svcrouter/protocol';
import { EDGE_COOKIE_PREFIX, SECURE_EDGE_COOKIE_PREFIX } from '../edge/index.js';

/** The session cookie of a tunnel host over plain HTTP (host-only, HttpOnly, SameSite=Lax). */
export const SESSION_COOKIE = '__svc_session';
/** Binds a sign-in to the browser that started it, so a code sent to another browser is refused. */
export const SIGN_IN_COOKIE = '__svc_signin';
/**
 * The name of the edge cookie `name` (SESSION_COOKIE, SIGN_IN_COOKIE) on a request that arrived
 * over TLS or not: over HTTPS both carry the `__Host-` prefix instead (`__Host-svc_session`), the
 * edge's two cookie prefixes (edge/forwarding.ts, which strips both). Tunnel hosts share a
 * domain, so a page of another tunnel could set a cookie for all of them (`Domain=<shared
 * domain>`) and shadow this host's (cookie tossing): a sign-in that never takes, or a sign-in the
 * other tunnel's owner started. A browser takes a `__Host-` cookie only when it is Secure,
 * host-only and for Path=/, so no other host can set one.
 */
export function edgeCookieName(name: string, secure: boolean): string {
  return secure ? `${SECURE_EDGE_COOKIE_PREFIX}${name.slice(EDGE_COOKIE_PREFIX.length)}` : name;
}
/** Longest cookie value looked at; anything longer is not ours. */
const MAX_COOKIE_LENGTH = 2048;
/** Verified cookies remembered; past it the memo starts over. */
const MAX_REMEMBERED = 10_000;

/** A signed-in visitor of one tunnel host. */
export interface Session {
  /** Random id: what a sign-out records, so every copy of the cookie is refused. */
  id: string;
  /** The tunnel host the cookie was made for: it is good there alone. */
  host: string;
  /** The provider the visitor signed in with: a tunnel bound later with another provider asks again. */
  provider: string;
  /** A digest of the account that held the tunnel at sign-in: another account binding the host later gets no session. */
  owner: string;
  /** The provider's subject and the visitor's email. */
  sub: string;
  email: string;
  /** When it ends, ms since the epoch. */
  expiresAt: number;
}

/**
 * Session cookies: `<payload>.<mac>`, the payload base64url JSON, the MAC HMAC-SHA256 under the
 * key all nodes share. A checked value is remembered (its MAC is not computed again), so a
 * browser's next request costs a map lookup; expiry and host are checked every time.
 */
export class SessionCookies {
  private readonly verified = new Map<string, Session>();

  constructor(private readonly key: Buffer) {}

  /** The cookie value of a session. */
  seal(session: Session): string {
    const payload = Buffer.from(
      JSON.stringify({
        i: session.id,
        h: session.host,
        p: session.provider,
        o: session.owner,
        s: session.sub,
        e: session.email,
        x: session.expiresAt,
      }),
    ).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  /** The session of a cookie value when it is ours, untampered, for `host` and not expired at `now`. */
  open(value: string, host: string, now: number): Session | undefined {
    let session = this.verified.get(value);
    if (session === undefined) {
      session = this.verify(value);
      if (session === undefined) return undefined;
      if (this.verified.size >= MAX_REMEMBERED) this.verified.clear();
      this.verified.set(value, session);
    }
    return session.host === host && session.expiresAt > now ? session : undefined;
  }

  private verify(value: string): Session | undefined {
    if (value.length > MAX_COOKIE_LENGTH) return undefined;
    const dot = value.indexOf('.');
    if (dot < 0) return undefined;
    const payload = value.slice(0, dot);
    // The MAC's text is compared, not its decoded bytes: base64url decoding ignores a last
    // character's spare bits, so several spellings would decode to the one right MAC.
    if (!sameText(value.slice(dot + 1), this.mac(payload))) return undefined;
    try {
      const { i, h, p, o, s, e, x } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
      // A cookie made before sessions had ids (or a provider) cannot be signed out: it is not taken.
      if (typeof i !== 'string' || typeof p !== 'string' || typeof o !== 'string') return undefined;
      if (typeof h !== 'string' || typeof s !== 'string' || typeof e !== 'string' || typeof x !== 'number') return undefined;
      return { id: i, host: h, provider: p, owner: o, sub: s, email: e, expiresAt: x };
    } catch {
      return undefined;
    }
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}

/**
 * The value of cookie `name` in flat header pairs (every Cookie header, HTTP/2 may split them):
 * undefined when absent, and when sent more than once. A second cookie of the name was set by
 * someone else (over plain HTTP another host of the shared domain can), and which one is this
 * host's own cannot be told, so neither is taken.
 */
export function cookieOf(headers: readonly string[], name: string): string | undefined {
  let found: string | undefined;
  for (let i = 0; i < headers.length; i += 2) {
    const header = headers[i]!;
    if (header.length !== 6 || header.toLowerCase() !== 'cookie') continue;
    for (const pair of headers[i + 1]!.split(';')) {
      const eq = pair.indexOf('=');
      if (eq <= 0 || pair.slice(0, eq).trim() !== name) continue;
      if (found !== undefined) return undefined;
      found = pair.slice(eq + 1).trim();
    }
  }
  return found;
}

/**
 * A Set-Cookie value of the edge cookie `name` for the tunnel host: host-only (no Domain),
 * HttpOnly, SameSite=Lax; on HTTPS Secure and named with the `__Host-` prefix. `path` narrows
 * where the browser sends it over plain HTTP (the sign-in cookie goes to its return path alone);
 * a `__Host-` cookie is for Path=/ or the browser drops it.
 */
export function setCookie(name: string, value: string, maxAgeSeconds: number, secure: boolean, path = '/'): string {
  const age = Math.max(0, Math.floor(maxAgeSeconds));
  return secure
    ? `${edgeCookieName(name, true)}=${value}; Path=/; Max-Age=${age}; HttpOnly; SameSite=Lax; Secure`
    : `${name}=${value}; Path=${path}; Max-Age=${age}; HttpOnly; SameSite=Lax`;
}
