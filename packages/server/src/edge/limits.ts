/** Limits of the edge's public listeners, in one place. */

/** Largest request head a visitor may send, on HTTP/1.1 and HTTP/2 alike (431 above it). */
export const MAX_HEADER_BYTES = 32 * 1024;
/**
 * Largest HTTP/2 header list the edge reads at all (SETTINGS_MAX_HEADER_LIST_SIZE). Above
 * MAX_HEADER_BYTES and up to this, a request is read and answered 431, as HTTP/1.1's is; beyond
 * it nghttp2 resets the stream unread, since an answer would mean holding an unbounded head.
 */
export const H2_HEADER_LIST_CAP = 8 * MAX_HEADER_BYTES;
/** Most header fields an HTTP/2 request may carry before it is reset (Node's HTTP/1.1 server keeps 2,000). */
export const H2_MAX_HEADER_PAIRS = 2000;

/**
 * Size of an HTTP/2 request head as SETTINGS_MAX_HEADER_LIST_SIZE counts it (RFC 9113 §6.5.2):
 * each field's name and value plus 32 octets. Lengths only: nothing is copied.
 */
export function headerListBytes(rawHeaders: readonly string[]): number {
  let bytes = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) bytes += rawHeaders[i]!.length + rawHeaders[i + 1]!.length + 32;
  return bytes;
}
