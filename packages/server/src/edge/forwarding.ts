import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { HOP_BY_HOP, INTERNAL_HEADER_PREFIX, type RequestHead } from '@svcrouter/protocol';
import type { AbsoluteTarget } from './request-target.js';
import type { Binding } from './router.js';

/*
 * The forwarding rules every path applies to a visitor request and its response: which headers
 * go up to the agent and which come back to the visitor.
 */

type VisitorRequest = IncomingMessage | Http2ServerRequest;

/** Headers the edge sets itself; visitors' copies are replaced, never passed through. */
const EDGE_SET = new Set(['x-forwarded-proto', 'x-forwarded-host']);

/** A plain request, or an `Upgrade` request whose Upgrade and Connection headers must reach the origin. */
export type RequestKind = 'request' | 'upgrade';

/**
 * Builds the request head sent to the agent: hop-by-hop and internal headers removed,
 * X-Forwarded-For appended to, X-Forwarded-Proto and -Host set by us. One pass, no copies
 * beyond the output array, since this runs for every request. The target sent is always a
 * path: `absolute`, when the visitor sent an absolute-form target, gives the path to send
 * instead of `req.url` and the authority that replaces Host.
 */
export function requestHead(
  req: Pick<VisitorRequest, 'rawHeaders' | 'method' | 'url'>,
  binding: Binding,
  host: string,
  ip: string,
  secure: boolean,
  kind: RequestKind,
  absolute?: AbsoluteTarget,
  /** Pass `Expect` on: the agent relays the origin's 100 Continue (or its refusal) itself. */
  forwardExpect = false,
): RequestHead {
  const upgrade = kind === 'upgrade';
  const raw = req.rawHeaders;
  const out: string[] = [];
  let forwardedFor = '';
  let named: Set<string> | undefined;
  let hasHost = false;
  let originalHost = '';
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i]!.toLowerCase();
    if (lower === 'connection') {
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
    if (lower.startsWith(INTERNAL_HEADER_PREFIX)) continue;
    if (lower === 'x-forwarded-for') {
      forwardedFor = forwardedFor ? `${forwardedFor}, ${value}` : value;
      continue;
    }
    out.push(name, value);
  }
  if (absolute) originalHost = absolute.authority;
  if (!hasHost) out.push('host', originalHost || host);
  out.push(
    'x-forwarded-for',
    forwardedFor ? `${forwardedFor}, ${ip}` : ip,
    'x-forwarded-proto',
    secure ? 'https' : 'http',
    'x-forwarded-host',
    originalHost || host,
  );
  const head: RequestHead = { m: req.method ?? 'GET', p: absolute?.path ?? req.url ?? '/', h: out, t: binding.tunnelId };
  if (upgrade) head.u = 1;
  else head.i = 1; // the edge takes the origin's 1xx heads (INFO) on a plain request
  return head;
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
  const out: string[] = [];
  let named: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'connection') {
      for (const token of raw[i + 1]!.split(',')) (named ??= new Set()).add(token.trim().toLowerCase());
    }
  }
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i]!.toLowerCase();
    if ((HOP_BY_HOP.has(lower) && (lower !== 'trailer' || !keepTrailer)) || named?.has(lower)) continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}
