import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { trailerFields } from '@svcrouter/protocol';

/**
 * Trailers between visitors and the tunnel. They cross as checked flat pairs (trailerFields:
 * token names, no control bytes, no framing, routing, authentication or internal fields).
 */

/** The visitor's request trailers (a chunked HTTP/1.1 body's trailer section, or HTTP/2 trailers), checked. */
export function requestTrailers(req: IncomingMessage | Http2ServerRequest): string[] {
  return req.rawTrailers.length === 0 ? [] : trailerFields(req.rawTrailers);
}

/**
 * Ends the visitor's response with the agent's trailers (checked fields: trailerFields).
 * HTTP/2 sends them as a trailing HEADERS frame; HTTP/1.1 in the last chunk, so only when the
 * response is chunked (Node drops them otherwise: nowhere to put them after a Content-Length body).
 * A repeated name is sent once, its values joined with a comma.
 */
export function endWithTrailers(res: ServerResponse | Http2ServerResponse, fields: readonly string[] | undefined): void {
  if (fields !== undefined && fields.length > 0) {
    const object: Record<string, string> = {};
    for (let i = 0; i < fields.length; i += 2) {
      const name = fields[i]!;
      object[name] = object[name] === undefined ? fields[i + 1]! : `${object[name]}, ${fields[i + 1]!}`;
    }
    res.addTrailers(object);
  }
  res.end();
}

/**
 * Sets an HTTP/2 response head without sending it: it leaves with the first body bytes, at the
 * end (one HEADERS frame with END_STREAM, which gRPC's "trailers-only" answers need: a status
 * in a head followed by an empty end is no status to a gRPC client), or on flushHeaders().
 * Throws, as writeHead does, on a name or value HTTP/2 refuses.
 */
export function setH2Head(res: Http2ServerResponse, status: number, pairs: readonly string[]): void {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i < pairs.length; i += 2) {
    const name = pairs[i]!.toLowerCase();
    // A 204 has no content and must not say otherwise (RFC 9110 §8.6); over HTTP/2 a non-zero
    // length with no DATA is malformed, and clients (nghttp2: curl, Node) reset the stream.
    if (status === 204 && name === 'content-length') continue;
    const existing = headers[name];
    const value = pairs[i + 1]!;
    headers[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  res.statusCode = status;
  for (const name of Object.keys(headers)) res.setHeader(name, headers[name]!);
}

/**
 * Whether Node's HTTP/1.x server will send this response chunked, the only framing that has
 * room for trailers: an HTTP/1.1 visitor, a body (not HEAD, 204 or 304) and no Content-Length.
 * Node refuses a `Trailer` header on any other response (ERR_HTTP_TRAILER_INVALID).
 */
export function chunkedForVisitor(req: IncomingMessage | Http2ServerRequest, status: number, headers: readonly string[]): boolean {
  if (req.httpVersionMajor !== 1 || req.httpVersionMinor < 1) return false;
  if (req.method === 'HEAD' || status === 204 || status === 304) return false;
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i]!.length === 14 && headers[i]!.toLowerCase() === 'content-length') return false;
  }
  return true;
}
