/**
 * Header mapping between a visitor's request, the tunnel and the origin.
 * Hop-by-hop headers describe one connection and must never cross a proxy (RFC 9110 §7.6.1);
 * HTTP/2 also forbids them outright, so stripping them is what lets one head serve both.
 */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

/** Prefix of headers that only the edge may set; visitors' copies are dropped. */
export const INTERNAL_HEADER_PREFIX = 'x-svc-';

/**
 * Removes hop-by-hop headers, headers the `Connection` header names, and pseudo-headers
 * from a flat raw header list ([name, value, …]); keeps order and original case.
 * `keep` lets a caller retain e.g. `upgrade`/`connection` for an upgrade request.
 */
export function stripHopByHop(raw: readonly string[], keep?: ReadonlySet<string>): string[] {
  let named: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'connection') {
      for (const token of raw[i + 1]!.split(',')) {
        const name = token.trim().toLowerCase();
        if (name && !keep?.has(name)) (named ??= new Set()).add(name);
      }
    }
  }
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (lower.charCodeAt(0) === 58 /* ':' */) continue;
    if (HOP_BY_HOP.has(lower) && !keep?.has(lower)) continue;
    if (named?.has(lower)) continue;
    out.push(name, raw[i + 1]!);
  }
  return out;
}
