/** Name of the dashboard's session cookie over plain HTTP (a laptop's `npm start`). */
export const SESSION_COOKIE = 'svc_session';
/**
 * Its name over HTTPS. A browser takes a `__Host-` cookie only when it is Secure, host-only and
 * for Path=/, so no tunnel host of the shared domain can set one for the apex (cookie tossing):
 * a page served through a tunnel cannot slip its own account's session into the dashboard.
 */
export const SECURE_SESSION_COOKIE = '__Host-svc_session';

/** The session cookie's name for a request that arrived over TLS or not. */
export function sessionCookieName(secure: boolean): string {
  return secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
}

/**
 * The session cookie of a request, or undefined when absent or sent more than once: a second
 * cookie of the name was set by someone else (over plain HTTP a sibling host can), and which
 * one is the browser's own cannot be told, so neither signs the request in.
 */
export function readSessionCookie(header: string | undefined, secure: boolean): string | undefined {
  const name = sessionCookieName(secure);
  const value = readCookie(header, name);
  if (value === undefined) return undefined;
  let seen = 0;
  for (const pair of header!.split(';')) {
    const eq = pair.indexOf('=');
    if (eq >= 0 && pair.slice(0, eq).trim() === name && ++seen > 1) return undefined;
  }
  return value;
}

/** The value of one cookie in a `Cookie` request header; undefined when absent. The first occurrence wins. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || pair.slice(0, eq).trim() !== name) continue;
    let value = pair.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    return value;
  }
  return undefined;
}

export interface SessionCookieOptions {
  /** Adds `Secure`: the request arrived over TLS. */
  secure: boolean;
  /** Lifetime in seconds; 0 expires the cookie at once. */
  maxAgeSeconds: number;
}

/**
 * The `Set-Cookie` value of the session cookie. No `Domain` attribute on purpose: the cookie
 * is host-only, so browsers never send it to `<name>.<shared domain>` tunnel hosts.
 * The value is written verbatim: session tokens are base64url, which needs no quoting.
 */
export function sessionCookie(value: string, options: SessionCookieOptions): string {
  const parts = [`${sessionCookieName(options.secure)}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${options.maxAgeSeconds}`];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

/** The `Set-Cookie` value that removes the session cookie. */
export function expiredSessionCookie(secure: boolean): string {
  return sessionCookie('', { secure, maxAgeSeconds: 0 });
}
