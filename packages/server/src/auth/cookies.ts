/** Name of the dashboard's session cookie. */
export const SESSION_COOKIE = 'svc_session';

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
  const parts = [`${SESSION_COOKIE}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${options.maxAgeSeconds}`];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

/** The `Set-Cookie` value that removes the session cookie. */
export function expiredSessionCookie(secure: boolean): string {
  return sessionCookie('', { secure, maxAgeSeconds: 0 });
}
