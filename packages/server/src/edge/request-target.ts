/**
 * The request target a visitor sent, as the edge forwards it. The agent is only ever sent a
 * path (origin-form, RFC 9112 §3.2.1); an absolute-form target (`GET http://host/x`, §3.2.2),
 * which HTTP/1.1 servers must accept, is split into its authority, which routes the request in
 * place of Host, and its path. Every other form (`*`, `host:port`, a bare word) is refused.
 */

/** An absolute-form target taken apart. */
export interface AbsoluteTarget {
  /** `host[:port]` as sent, never empty and without userinfo. */
  authority: string;
  /** The path and query, `/` when the URL had none. */
  path: string;
}

/** Whether a target is origin-form: a path, which is what nearly every request carries. */
export function isOriginForm(target: string): boolean {
  return target.charCodeAt(0) === 47; /* '/' */
}

const NOT_PRINTABLE = /[^\x21-\x7e]/;

/** Whether every character of a target is printable ASCII, as an HTTP/1.1 request line's must be. */
export function isPrintableTarget(target: string): boolean {
  return !NOT_PRINTABLE.test(target);
}

const ABSOLUTE = /^https?:\/\/([^/?#@\s]+)([/?][^#\s]*)?$/i;

/**
 * Takes apart an absolute-form http(s) target; undefined for anything else (including
 * origin-form, which callers test first with isOriginForm). The path is kept as sent: no dot
 * segments resolved and nothing re-encoded, exactly as an origin-form target is forwarded.
 */
export function parseAbsoluteTarget(target: string): AbsoluteTarget | undefined {
  const match = ABSOLUTE.exec(target);
  if (!match) return undefined;
  const rest = match[2] ?? '';
  return { authority: match[1]!, path: rest.startsWith('/') ? rest : `/${rest}` };
}

/** The 400 page's sentence for a target that is neither a path nor an absolute http(s) URL. */
export const BAD_TARGET_REASON = 'The request target must be a path or an absolute http(s) URL.';

/** Why a request names no single authority to route by; answered with 400 and this sentence. */
export class AuthorityRefusal {
  constructor(readonly reason: string) {}
}
const NO_HOST = new AuthorityRefusal('A Host header is required.');
const DUPLICATE_HOST = new AuthorityRefusal('A request must carry exactly one Host header.');
const HOST_DISAGREES = new AuthorityRefusal('The Host header and :authority name different hosts.');

/**
 * The authority a request is routed by, with one rule for every visitor protocol: the
 * absolute-form target's (RFC 9112 §3.2.2: Host is then ignored, and replaced on the way to the
 * origin), else HTTP/2's `:authority`, else the single Host. More than one Host (RFC 9112 §3.2),
 * or a Host that disagrees with `:authority`, is refused: a front proxy and the edge could
 * otherwise each see a different host in one request. One pass over the raw headers, no copies.
 */
export function routingAuthority(rawHeaders: readonly string[], absolute: AbsoluteTarget | undefined): string | AuthorityRefusal {
  let host: string | undefined;
  let authority: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') {
      if (host !== undefined) return DUPLICATE_HOST;
      host = rawHeaders[i + 1]!;
    } else if (name === ':authority') {
      authority = rawHeaders[i + 1]!;
    }
  }
  if (absolute) return absolute.authority;
  if (authority !== undefined) {
    if (host !== undefined && host.toLowerCase() !== authority.toLowerCase()) return HOST_DISAGREES;
    return authority;
  }
  return host || NO_HOST;
}
