import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants as h2, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { hasValidFields } from '@svcrouter/protocol';

type VisitorRequest = IncomingMessage | Http2ServerRequest;
type VisitorResponse = ServerResponse | Http2ServerResponse;

/**
 * What the edge still reads of a request body the origin answered without waiting for: up to
 * this much is drained so an HTTP/1.1 connection stays usable; beyond it, the connection closes.
 * A small rest costs less to read than a new connection; a large one is not worth taking.
 */
export const DRAIN_UNREAD_BYTES = 256 * 1024;
/**
 * How long an HTTP/1.1 connection that is being closed after an early answer keeps reading (and
 * dropping) what the visitor still sends. Closing while bytes arrive makes the kernel send a
 * reset, which can destroy the answer in the visitor's receive buffer before it is read.
 */
export const LINGER_MS = 2000;

const CONTINUE = /(?:^|,)\s*100-continue\s*(?:,|$)/i;

/** Whether the visitor sent `Expect: 100-continue` (and so waits for a 100 before its body). */
export function expectsContinue(req: Pick<VisitorRequest, 'headers'>): boolean {
  const expect = req.headers.expect;
  return typeof expect === 'string' && CONTINUE.test(expect);
}

/**
 * Writes an informational head (already filtered, 1xx but 101) to a visitor of Node's server:
 * 100 Continue, 102 Processing and 103 Early Hints over HTTP/1.1, any 1xx over HTTP/2, none
 * over HTTP/1.0. One whose fields could split it, or that Node refuses, is dropped: the response
 * is not affected.
 */
export function writeInterim(req: VisitorRequest, res: VisitorResponse, status: number, fields: readonly string[]): void {
  if (res.headersSent || res.writableEnded) return;
  // An HTTP/1.0 client knows no 1xx: it would take the first one for the final answer and the
  // real response for its body. A server must not send it one (RFC 9110 §15.2), nor a 100 for
  // an expectation it must ignore (§10.1.1).
  if (req.httpVersionMajor === 1 && req.httpVersionMinor === 0) return;
  // Node writes 1xx heads as given (103's fields unchecked over HTTP/1.1): nothing may split them.
  if (!hasValidFields(fields)) return;
  try {
    if (req.httpVersionMajor === 2) {
      (req as Http2ServerRequest).stream.additionalHeaders({ ...toObject(fields), [h2.HTTP2_HEADER_STATUS]: status });
    } else if (status === 100) {
      (res as ServerResponse).writeContinue();
    } else if (status === 102) {
      (res as ServerResponse).writeProcessing();
    } else if (status === 103) {
      // Node sends a 103 only with a Link (it says nothing without one).
      (res as ServerResponse).writeEarlyHints(toObject(fields) as Record<string, string | string[]>);
    }
  } catch {
    // A value Node refuses (a malformed Link): the hint is lost, the response is not.
  }
}

/**
 * The response is complete but the visitor's body is not: the origin answered without reading
 * it all. The edge stops taking it. HTTP/2 ends the stream with RST_STREAM NO_ERROR (RFC 9113
 * §8.1). HTTP/1.1 has no such signal: a short known rest is read and dropped so the connection
 * stays usable; otherwise the edge closes its side and drops what still arrives for at most
 * LINGER_MS (a lingering close), so the visitor reads the answer before the connection goes.
 */
export function stopReadingBody(req: VisitorRequest, bytesRead: number): void {
  if (req.httpVersionMajor === 2) {
    const stream = (req as Http2ServerRequest).stream;
    if (!stream.destroyed) stream.close(h2.NGHTTP2_NO_ERROR);
    return;
  }
  req.resume();
  if (!closesAfterStop(req, bytesRead)) return;
  const socket = req.socket;
  if (socket.destroyed) return;
  socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(timer));
}

function toObject(pairs: readonly string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i < pairs.length; i += 2) {
    const name = pairs[i]!.toLowerCase();
    const value = pairs[i + 1]!;
    const existing = out[name];
    if (existing === undefined) out[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else out[name] = [existing, value];
  }
  return out;
}

/** Whether stopReadingBody will close an HTTP/1.1 connection (its answer should say `Connection: close`): the rest of the body is not short and known. */
export function closesAfterStop(req: VisitorRequest, bytesRead: number): boolean {
  if (req.httpVersionMajor === 2 || req.complete) return false;
  const length = Number(req.headers['content-length']);
  return !(Number.isSafeInteger(length) && length - bytesRead <= DRAIN_UNREAD_BYTES);
}
