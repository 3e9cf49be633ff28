import { sameText } from '@svcrouter/protocol';
import type { TLSSocket } from 'node:tls';
import { readSessionCookie, type Authenticate, type SessionIdentity } from '../auth/index.js';
import type { Account, DashboardSession, KeyRecord } from '../store/index.js';
import { ApiError, ApiErrorCode } from './errors.js';
import type { ApiRequest } from './http-io.js';

/** Resolves the dashboard's session cookie value; undefined for missing, malformed, unknown or expired sessions. */
export type ResolveSession = (cookieValue: string | undefined) => Promise<SessionIdentity | undefined>;

/** Who sent an API request: a Bearer token's key, or a dashboard session. */
export interface RequestIdentity {
  account: Account;
  key?: KeyRecord | undefined;
  session?: DashboardSession | undefined;
}

export type { Authenticate };

/** Header carrying the session's CSRF token on cookie-authenticated, state-changing requests. */
export const CSRF_HEADER = 'x-csrf-token';
/** The 403's sentence when the CSRF rule fails. */
export const CSRF_MESSAGE = 'missing or invalid X-CSRF-Token header; reload the dashboard';

/**
 * The caller of a request. An `Authorization` header, when present, is the only credential
 * that counts (a wrong token is not rescued by a cookie); without one, the session cookie.
 */
export async function authenticateRequest(
  req: ApiRequest,
  authenticate: Authenticate,
  resolveSession: ResolveSession | undefined,
): Promise<RequestIdentity | undefined> {
  const authorization = req.headers.authorization;
  if (authorization !== undefined || !resolveSession) return authenticate(authorization);
  return resolveSession(readSessionCookie(req.headers.cookie, arrivedOverTls(req)));
}

/**
 * Throws 403 csrf_failed unless a cookie-authenticated request is safe: GET and HEAD always are;
 * anything else must echo the session's CSRF token and, if it names an Origin, come from the
 * apex origin it was sent to. SameSite=Lax is not enough on its own: every tunnel hostname
 * (`<name>.<shared domain>`) is same-site with the apex, so a page any user serves through a
 * tunnel could post to the API with the visitor's cookie. It can read neither the token nor
 * forge the Origin.
 */
export function checkCsrf(req: ApiRequest, session: DashboardSession): void {
  if (req.method === 'GET' || req.method === 'HEAD') return;
  const sent = req.headers[CSRF_HEADER];
  const ok = typeof sent === 'string' && sameText(sent, session.csrfToken) && originAllowed(req);
  if (!ok) throw new ApiError(403, ApiErrorCode.CSRF_FAILED, CSRF_MESSAGE);
}

function originAllowed(req: ApiRequest): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  return origin.toLowerCase() === requestOrigin(req).toLowerCase();
}

/**
 * Whether the request came over TLS. The edge serves HTTP/2 only on its TLS listener (ALPN), and
 * an HTTP/1.1 request over TLS sits on the TLSSocket itself (the lean path hands that socket over).
 */
export function arrivedOverTls(req: ApiRequest): boolean {
  return req.httpVersionMajor === 2 || (req.socket as Partial<TLSSocket>).encrypted === true;
}

/** The origin the request was sent to: scheme and the Host (or :authority) it named. */
export function requestOrigin(req: ApiRequest): string {
  const host = (req.headers[':authority'] as string | undefined) ?? req.headers.host ?? '';
  return `${arrivedOverTls(req) ? 'https' : 'http'}://${host}`;
}

/** The client's address as the socket reports it (IPv4-mapped IPv6 unwrapped). */
export function clientAddress(req: ApiRequest): string {
  const address = req.socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}
