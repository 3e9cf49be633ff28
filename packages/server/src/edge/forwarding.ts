import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { HOP_BY_HOP, INTERNAL_HEADER_PREFIX, type RequestHead } from '@svcrouter/protocol';
import type { Identity } from '../policy/index.js';
import type { AbsoluteTarget } from './request-target.js';

/*
 * The forwarding rules every path applies to a visitor request and its response: which headers
 * go up to the agent and which come back to the visitor.
 */

type VisitorRequest = IncomingMessage | Http2ServerRequest;

/**
 * Headers a visitor may not send the local service, which trusts them as its proxy's word: the
 * ones the edge sets itself (replaced), and the other names proxies give the client's address
 * or scheme in (dropped), so a visitor cannot forge them. Every other `X-Forwarded-*` is
 * dropped too; `X-Forwarded-For` is the exception, appended to as proxies do.
 */
const EDGE_SET = new Set(['x-forwarded-proto', 'x-forwarded-host', 'x-real-ip', 'forwarded']);
const FORWARDED_PREFIX = 'x-forwarded-';

/** A plain request, or an `Upgrade` request whose Upgrade and Connection headers must reach the origin. */
export type RequestKind = 'request' | 'upgrade';

/** The parts of a visitor's request head the forwarding rules read (Node's requests have them; the lean path's are mapped). */
export type HeadSource = Pick<VisitorRequest, 'rawHeaders' | 'method' | 'url'>;

/** Where a request is forwarded to, and what the rules must know of how it came. */
export interface Forwarding {
  /** The tunnel the stream is opened for (the agent routes by it). */
  tunnelId: string;
  /** The routed host, for Host and X-Forwarded-Host when the visitor named none. */
  host: string;
  /** The visitor's address, appended to X-Forwarded-For. */
  ip: string;
  /** The visitor came over TLS (X-Forwarded-Proto). */
  secure: boolean;
  kind: RequestKind;
  /** A body follows the head: the agent streams one to the origin only when told so. */
  body: boolean;
  /** The visitor's absolute-form target: its path is sent instead of `url`, its authority replaces Host. */
  absolute: AbsoluteTarget | undefined;
  /** Pass `Expect` on: the agent relays the origin's 100 Continue (or its refusal) itself. */
  forwardExpect?: boolean;
  /** The edge checked the visitor's credentials (basic auth): its Authorization header stays here. */
  dropAuthorization?: boolean;
  /** The signed-in visitor (single sign-on): sent as X-Svc-Identity and X-Forwarded-Email, the edge's cookies removed. */
  identity?: Identity | undefined;
}

/** Headers that carry the identity of a signed-in visitor; only the edge sets them. */
export const IDENTITY_HEADER = 'x-svc-identity';
export const EMAIL_HEADER = 'x-forwarded-email';
/** Prefix of the edge's own cookies (the sign-in's); they never reach the local service. */
export const EDGE_COOKIE_PREFIX = '__svc_';
/** The same cookies' prefix over HTTPS, where they carry the `__Host-` prefix (`__Host-svc_session`). */
export const SECURE_EDGE_COOKIE_PREFIX = '__Host-svc_';

/**
 * Builds the request head sent to the agent: hop-by-hop and internal headers removed,
 * X-Forwarded-For appended to, X-Forwarded-Proto and -Host set by us. One pass, no copies
 * beyond the output array, since this runs for every request. The target sent is always a
 * path.
 */
export function requestHead(req: HeadSource, forwarding: Forwarding): RequestHead {
  const { kind, absolute, forwardExpect = false, dropAuthorization = false, identity } = forwarding;
  const upgrade = kind === 'upgrade';
  const raw = req.rawHeaders;
  const out: string[] = [];
  let forwardedFor = '';
  let named: Set<string> | undefined;
  let hasHost = false;
  let originalHost = '';
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 10 && name.toLowerCase() === 'connection') {
      for (const token of raw[i + 1]!.split(',')) (named ??= new Set()).add(token.trim().toLowerCase());
    }
  }
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    const lower = name.toLowerCase();
    if (lower.charCodeAt(0) === 58 /* ':' pseudo-header (HTTP/2) */) {
      if (lower === ':authority') originalHost = value;
      continue;
    }
    if (lower === 'host') {
      // An absolute-form target's authority replaces Host (RFC 9112 §3.2.2), as it routed the request.
      const routed = absolute?.authority ?? value;
      hasHost = true;
      originalHost = routed;
      out.push(name, routed);
      continue;
    }
    if (upgrade && (lower === 'upgrade' || lower === 'connection')) {
      out.push(name, value);
      continue;
    }
    if (HOP_BY_HOP.has(lower) || EDGE_SET.has(lower) || named?.has(lower)) continue;
    if (lower === 'expect' && !forwardExpect) continue;
    if (dropAuthorization && lower === 'authorization') continue;
    // X-Svc-Identity goes with the internal prefix; X-Forwarded-Email (and every other
    // X-Forwarded-* but For) is only ever the edge's.
    if (
      lower.charCodeAt(0) === 120 /* x */ &&
      (lower.startsWith(INTERNAL_HEADER_PREFIX) || (lower.startsWith(FORWARDED_PREFIX) && lower !== 'x-forwarded-for'))
    )
      continue;
    if (identity !== undefined && lower === 'cookie') {
      const kept = withoutEdgeCookies(value);
      if (kept !== '') out.push(name, kept);
      continue;
    }
    if (lower === 'x-forwarded-for') {
      forwardedFor = forwardedFor ? `${forwardedFor}, ${value}` : value;
      continue;
    }
    out.push(name, value);
  }
  if (absolute) originalHost = absolute.authority;
  const host = forwarding.host;
  if (!hasHost) out.push('host', originalHost || host);
  out.push(
    'x-forwarded-for',
    forwardedFor ? `${forwardedFor}, ${forwarding.ip}` : forwarding.ip,
    'x-forwarded-proto',
    forwarding.secure ? 'https' : 'http',
    'x-forwarded-host',
    originalHost || host,
  );
  if (identity !== undefined) out.push(IDENTITY_HEADER, identity.token, EMAIL_HEADER, identity.email);
  const head: RequestHead = { m: req.method ?? 'GET', p: absolute?.path ?? req.url ?? '/', h: out, t: forwarding.tunnelId };
  if (upgrade) head.u = 1;
  else head.i = 1; // the edge takes the origin's 1xx heads (INFO) on a plain request
  if (forwarding.body) head.b = 1;
  return head;
}

/** A Cookie header's value without the edge's own cookies (either prefix); '' when none is left. */
export function withoutEdgeCookies(value: string): string {
  if (!value.includes(EDGE_COOKIE_PREFIX) && !value.includes(SECURE_EDGE_COOKIE_PREFIX)) return value;
  return value
    .split(';')
    .filter((pair) => {
      const name = pair.trimStart();
      return !name.startsWith(EDGE_COOKIE_PREFIX) && !name.startsWith(SECURE_EDGE_COOKIE_PREFIX);
    })
    .join(';')
    .trim()
    .replace(/^;\s*/, '');
}

/**
 * Header pairs of a request head built on another node (the cluster's relay) with the identity
 * added and the edge's cookies removed; the entry node already dropped the visitor's copies.
 */
export function withIdentity(headers: readonly string[], identity: Identity): string[] {
  const out: string[] = [];
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    const lower = name.toLowerCase();
    if (lower === IDENTITY_HEADER || lower === EMAIL_HEADER) continue;
    if (lower === 'cookie') {
      const kept = withoutEdgeCookies(headers[i + 1]!);
      if (kept !== '') out.push(name, kept);
      continue;
    }
    out.push(name, headers[i + 1]!);
  }
  out.push(IDENTITY_HEADER, identity.token, EMAIL_HEADER, identity.email);
  return out;
}

/** Whether a visitor request carries a body (so the stream stays open for it). */
export function hasRequestBody(req: VisitorRequest): boolean {
  const headers = req.headers;
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  if (length !== undefined) return length !== '0';
  // HTTP/2: a body exists unless the HEADERS frame ended the stream.
  if (req.httpVersionMajor === 2) return !(req as Http2ServerRequest).stream.endAfterHeaders;
  return false;
}

/**
 * Response headers safe to give the visitor: hop-by-hop ones removed (HTTP/2 forbids them),
 * but `Trailer`, which announces the trailer fields that pass through to the visitor, unless
 * `keepTrailer` is false (a response that will not be chunked has no trailers to announce).
 */
export function responseHeaders(raw: readonly string[], keepTrailer = true): string[] {
  const memo = lastResponse;
  if (keepTrailer === memo.keepTrailer && samePairs(raw, memo.raw)) return memo.out.slice();
  const out: string[] = [];
  let named: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 10 && name.toLowerCase() === 'connection') {
      for (const token of raw[i + 1]!.split(',')) (named ??= new Set()).add(token.trim().toLowerCase());
    }
  }
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i]!.toLowerCase();
    if ((HOP_BY_HOP.has(lower) && (lower !== 'trailer' || !keepTrailer)) || named?.has(lower)) continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  if (raw.length <= MAX_REMEMBERED_FIELDS) lastResponse = { raw: raw.slice(), keepTrailer, out: out.slice() };
  return out;
}

/**
 * Longest head (names and values) the one-entry head memos keep (responseHeaders here,
 * visitorResponseHead in lean/); longer ones are worked out every time.
 */
export const MAX_REMEMBERED_FIELDS = 64;

/**
 * The last head responseHeaders filtered and the result. Consecutive responses are often the
 * same head (an origin answering one path the same way, its Date changing once a second): the
 * same fields give the same result, compared in a fraction of the filtering's time. Callers get
 * their own array, as the traffic rules and the writers may build on it.
 */
let lastResponse: { raw: readonly string[]; keepTrailer: boolean; out: readonly string[] } = { raw: [], keepTrailer: true, out: [] };

/** Whether two flat header lists hold the same fields in the same order. */
export function samePairs(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The body length a response head announces (its first Content-Length, filtered headers), or -1
 * when it announces none or one that is not a plain decimal number.
 */
export function declaredLength(headers: readonly string[]): number {
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    if (name.length !== 14 || name.toLowerCase() !== 'content-length') continue;
    const value = headers[i + 1]!;
    if (value.length === 0 || value.length > 15) return -1;
    let length = 0;
    for (let j = 0; j < value.length; j++) {
      const digit = value.charCodeAt(j) - 48;
      if (digit < 0 || digit > 9) return -1;
      length = length * 10 + digit;
    }
    return length;
  }
  return -1;
}
