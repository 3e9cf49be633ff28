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

/** A header name: an RFC 9110 token. */
export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The bytes a header value may not hold: controls other than tab, CR, LF and NUL among them (Node's rule). */
export const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * Most characters of header names and values a response head may carry, as the agent allows an
 * origin's head (64 KiB): a larger one is not passed to visitors, whose clients refuse far less.
 */
export const MAX_RESPONSE_HEAD_FIELD_CHARS = 64 * 1024;

/**
 * Whether a HEADERS payload a peer sent has a response head's shape: a status that is an
 * integer from 100 to 599, and headers as an even list of strings of at most
 * MAX_RESPONSE_HEAD_FIELD_CHARS together. Names and values are not
 * checked here (see `hasValidFields`); the edge's lean path checks them as it serialises.
 */
export function isResponseHead(meta: unknown): meta is { s: number; h: string[] } {
  if (typeof meta !== 'object' || meta === null) return false;
  const { s, h } = meta as { s: unknown; h: unknown };
  if (typeof s !== 'number' || !Number.isInteger(s) || s < 100 || s > 599) return false;
  if (!Array.isArray(h) || h.length % 2 !== 0) return false;
  let bytes = 0;
  for (let i = 0; i < h.length; i++) {
    const field: unknown = h[i];
    if (typeof field !== 'string') return false;
    bytes += field.length;
  }
  return bytes <= MAX_RESPONSE_HEAD_FIELD_CHARS;
}

/** Whether every name in flat header pairs is a token and no value holds a control byte. */
export function hasValidFields(pairs: readonly string[]): boolean {
  for (let i = 0; i < pairs.length; i += 2) {
    if (!TOKEN.test(pairs[i]!) || INVALID_VALUE.test(pairs[i + 1]!)) return false;
  }
  return true;
}

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

/**
 * Fields a trailer section may not carry (RFC 9110 §6.5.1): framing, routing, request
 * modifiers, authentication, and fields a recipient must know before the body. A sender's
 * copies are dropped, as HTTP/2 stacks refuse some of them outright.
 */
export const FORBIDDEN_TRAILERS = new Set([
  ...HOP_BY_HOP,
  'authorization',
  'cache-control',
  'content-encoding',
  'content-length',
  'content-range',
  'content-type',
  'cookie',
  'expect',
  'host',
  'max-forwards',
  'range',
  'set-cookie',
  'www-authenticate',
]);

/** Most trailer fields kept from one message; the rest are dropped. */
export const MAX_TRAILER_FIELDS = 64;

/**
 * The trailer fields of a TRAILERS payload or a parsed trailer section that may be passed on:
 * flat pairs whose name is a token (lower-cased, as HTTP/2 wants it) and whose value holds no
 * control byte, without pseudo-fields, hop-by-hop, forbidden or internal (`x-svc-`) fields. A
 * payload of the wrong shape yields none: trailers arrive after the head, so the message can no
 * longer be refused, only its bad fields dropped.
 */
export function trailerFields(meta: unknown): string[] {
  if (!Array.isArray(meta) || meta.length % 2 !== 0) return [];
  const out: string[] = [];
  for (let i = 0; i < meta.length && out.length < MAX_TRAILER_FIELDS * 2; i += 2) {
    const name: unknown = meta[i];
    const value: unknown = meta[i + 1];
    if (typeof name !== 'string' || typeof value !== 'string') return [];
    if (!TOKEN.test(name) || INVALID_VALUE.test(value)) continue;
    const lower = name.toLowerCase();
    if (FORBIDDEN_TRAILERS.has(lower) || lower.startsWith(INTERNAL_HEADER_PREFIX)) continue;
    out.push(lower, value);
  }
  return out;
}
