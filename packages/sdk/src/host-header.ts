import type { RequestHead } from '@svcrouter/protocol';
import type { LocalTarget } from './local-target.js';

/**
 * The Host header a tunnel sends to its local service instead of the public hostname, for dev
 * servers that refuse a foreign Host (Vite's "Blocked request", webpack's "Invalid Host header").
 * The public hostname stays in X-Forwarded-Host, which the edge sets on every request.
 */
export interface HostRewrite {
  /** Value sent as Host. */
  host: string;
  /** Local origins whose absolute `Location`s are turned back into the public URL. */
  localOrigins: string[];
}

/** A URI host (name, IPv4 or [IPv6]) with an optional port: what a Host header may carry. */
const HOST_VALUE = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=%]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * Why `value` cannot be a host header option, or undefined when it can: `rewrite`, or a host
 * with an optional port. Anything else (spaces, a CR or LF that would start another header
 * line, a path) is refused before it reaches a request.
 */
export function hostHeaderProblem(value: string): string | undefined {
  if (value === 'rewrite' || HOST_VALUE.test(value)) return undefined;
  return `invalid host header ${JSON.stringify(value)}: expected "rewrite" or a host name, optionally with :port`;
}

/** `rewrite` → the local target's `host:port`; any other value is sent as given; undefined → no rewrite. */
export function hostRewrite(option: string | undefined, target: LocalTarget): HostRewrite | undefined {
  if (option === undefined || option === '') return undefined;
  const host = option === 'rewrite' ? new URL(target.origin).host : option;
  const localOrigins = [target.origin];
  // A redirect may name the host the server was asked for rather than its own origin.
  if (option !== 'rewrite') localOrigins.push(`${target.protocol}//${host}`);
  return { host, localOrigins };
}

/** Replaces the Host pair of a request head in place (adding one if the edge sent none). */
export function applyHostRewrite(head: RequestHead, rewrite: HostRewrite): void {
  const pairs = head.h;
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    if (pairs[i]!.length === 4 && pairs[i]!.toLowerCase() === 'host') {
      pairs[i + 1] = rewrite.host;
      return;
    }
  }
  pairs.push('Host', rewrite.host);
}

/** The visitor's origin (`https://name.example`), from the edge's X-Forwarded-Proto and -Host. */
export function publicOrigin(head: RequestHead): string | undefined {
  let proto: string | undefined;
  let host: string | undefined;
  const pairs = head.h;
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const name = pairs[i]!;
    // By length first: most names are neither, and lower-casing each one allocates.
    if (name.length === 17 && name.toLowerCase() === 'x-forwarded-proto') proto = pairs[i + 1];
    else if (name.length === 16 && name.toLowerCase() === 'x-forwarded-host') host = pairs[i + 1];
  }
  return proto && host ? `${proto}://${host}` : undefined;
}

/**
 * Rewrites, in place, a response `Location` that points at the local service so it points at
 * the public URL instead: the browser must never be sent to `localhost:5173`, which is the
 * visitor's own machine. Relative and foreign Locations are left alone. The visitor's origin
 * is read from `head` only when there is a Location to rewrite (most responses have none).
 */
export function rewriteLocation(headers: string[], rewrite: HostRewrite, head: RequestHead): void {
  let visitorOrigin: string | null | undefined = null;
  for (let i = 0; i + 1 < headers.length; i += 2) {
    if (headers[i]!.length !== 8 || headers[i]!.toLowerCase() !== 'location') continue;
    const value = headers[i + 1]!;
    for (const local of rewrite.localOrigins) {
      if (value === local || value.startsWith(`${local}/`) || value.startsWith(`${local}?`)) {
        if (visitorOrigin === null) visitorOrigin = publicOrigin(head);
        if (visitorOrigin !== undefined) headers[i + 1] = visitorOrigin + value.slice(local.length);
        break;
      }
    }
  }
}
