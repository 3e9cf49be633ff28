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
 * Flow-control windows the edge announces to HTTP/2 visitors, per stream (SETTINGS_INITIAL_WINDOW_SIZE)
 * and per connection (a WINDOW_UPDATE on stream 0 right after the handshake). HTTP/2's 64 KiB
 * defaults let an uploading client send 64 KiB and then wait for the edge to take it, which
 * held uploads well below HTTP/1.1's speed and cost CPU in small frames and window updates.
 *
 * A window is also a promise to buffer. While a request's agent is behind, the edge pauses the
 * stream and Node returns no window for it, so a visitor parks at most one stream window per
 * stream; Node keeps returning the connection window whatever the streams do, so that window
 * does not bound anything. Hence the cap on concurrent streams: one connection parks at most
 * H2_MAX_CONCURRENT_STREAMS × H2_STREAM_WINDOW (100 MiB) in the edge.
 */
export const H2_STREAM_WINDOW = 1024 * 1024;
export const H2_CONNECTION_WINDOW = 8 * 1024 * 1024;
/** Streams one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS; Node's default is unlimited). */
export const H2_MAX_CONCURRENT_STREAMS = 100;

/**
 * Size of an HTTP/2 request head as SETTINGS_MAX_HEADER_LIST_SIZE counts it (RFC 9113 §6.5.2):
 * each field's name and value plus 32 octets. Lengths only: nothing is copied.
 */
export function headerListBytes(rawHeaders: readonly string[]): number {
  let bytes = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) bytes += rawHeaders[i]!.length + rawHeaders[i + 1]!.length + 32;
  return bytes;
}

/** Timeouts of the public listeners, in milliseconds. */
export interface ListenerTimeouts {
  /** A request head must be complete this long after its connection is ready for one (Node's headersTimeout). */
  headersMs: number;
  /** A whole request, body included, must have arrived within this (Node's requestTimeout). */
  requestMs: number;
  /** An idle keep-alive HTTP/1.1 connection is closed after this; longer than typical client pools, so reuse does not race a close. */
  keepAliveMs: number;
  /** An HTTP/2 session that carried no frame for this long is closed (GOAWAY; streams still open finish). */
  h2IdleMs: number;
  /** A TLS handshake must be done within this. */
  tlsHandshakeMs: number;
  /**
   * A connection the edge has ended is destroyed this long later if its peer neither closed its
   * side nor took anything of what is still queued for it: an ended socket is never held for ever.
   */
  endGraceMs: number;
}

/** The listeners' timeouts unless the edge's options say otherwise. */
export const DEFAULT_LISTENER_TIMEOUTS: Readonly<ListenerTimeouts> = Object.freeze({
  headersMs: 60_000,
  requestMs: 300_000,
  keepAliveMs: 65_000,
  h2IdleMs: 65_000,
  tlsHandshakeMs: 10_000,
  endGraceMs: 5_000,
});
