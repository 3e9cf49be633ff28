import type { Socket } from 'node:net';
import type { RequestHead } from '@svcrouter/protocol';

/** Ends a chunked request body: the last (empty) chunk and no trailers. */
export const LAST_CHUNK = '0\r\n\r\n';

/**
 * The last chunk with a trailer section, for one latin1 write. `fields` must have been
 * checked (trailerFields: token names, no CR, LF or other control byte in values).
 */
export function lastChunkWithTrailers(fields: readonly string[]): string {
  let text = '0\r\n';
  for (let i = 0; i < fields.length; i += 2) text += fields[i]! + ': ' + fields[i + 1]! + '\r\n';
  return text + '\r\n';
}

/** How a request body is framed towards the origin. */
export interface RequestFraming {
  /** The request head, ready for one latin1 write. */
  head: string;
  /** The visitor's Content-Length; undefined when the body is sent chunked (or absent). */
  contentLength: number | undefined;
  /** Whether the body is chunk-encoded by us. */
  chunked: boolean;
}

/**
 * Serializes a request head for the origin: the edge's headers in their order (Host among
 * them), plus `Transfer-Encoding: chunked` when a body follows without a Content-Length (the
 * edge removed the visitor's own Transfer-Encoding with the other hop-by-hop headers).
 * Throws if the target is not a path (origin-form), or if any part holds a CR or LF: the edge's parser should make that impossible, and a
 * line break here would let one request smuggle another onto the connection.
 */
export function frameRequest(head: RequestHead): RequestFraming {
  // Only a path goes on the request line: an absolute target would ask the origin to act as a proxy.
  if (!isOriginForm(head.p)) throw new Error('request target is not a path');
  assertNoLineBreak(head.m);
  assertNoLineBreak(head.p);
  let text = head.m + ' ' + head.p + ' HTTP/1.1\r\n';
  let contentLength: number | undefined;
  const pairs = head.h;
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const name = pairs[i]!;
    const value = pairs[i + 1]!;
    assertNoLineBreak(name);
    assertNoLineBreak(value);
    if (name.length === 14 && name.toLowerCase() === 'content-length') contentLength = Number(value);
    text += name + ': ' + value + '\r\n';
  }
  const chunked = head.b === 1 && contentLength === undefined;
  if (chunked) text += 'Transfer-Encoding: chunked\r\n';
  return { head: text + '\r\n', contentLength, chunked };
}

/**
 * Writes one piece of a chunked body: size line, data, CRLF, corked into one writev.
 * Returns write()'s verdict: false when the socket wants the writer to wait for 'drain'.
 */
export function writeChunk(socket: Socket, data: Buffer, done?: (error?: Error | null) => void): boolean {
  // An empty chunk would be read as the end of the body.
  if (data.length === 0) return true;
  socket.cork();
  socket.write(data.length.toString(16) + '\r\n', 'latin1');
  socket.write(data);
  const ok = socket.write('\r\n', 'latin1', done);
  socket.uncork();
  return ok;
}

/** Whether a request target is origin-form (`/path?query`), the only form the agent forwards. */
export function isOriginForm(target: string): boolean {
  return target.charCodeAt(0) === 47; /* '/' */
}

function assertNoLineBreak(text: string): void {
  if (text.includes('\n') || text.includes('\r')) throw new Error('line break in request head');
}
