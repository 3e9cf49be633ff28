import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { hasRequestBody } from './forwarding.js';
import { closesAfterStop, expectsContinue, stopReadingBody } from './interim.js';

type VisitorRequest = IncomingMessage | Http2ServerRequest;
type VisitorResponse = ServerResponse | Http2ServerResponse;

/**
 * Reads a visitor's whole request body, at most `max` bytes (the one place the edge holds a body:
 * a webhook's signature covers all of it). Answers the bytes; 'too large' as soon as the body
 * announces or passes `max` (the rest is not read: once the answer has left, the visitor is told
 * to stop, as for any early answer); undefined when the visitor left first. `sendContinue` runs
 * when the visitor waits for a 100 Continue before sending.
 */
export function readWholeBody(
  req: VisitorRequest,
  res: VisitorResponse,
  max: number,
  sendContinue: () => void,
): Promise<Buffer | 'too large' | undefined> {
  if (!hasRequestBody(req)) return Promise.resolve(Buffer.alloc(0));
  const refuse = (read: number): 'too large' => {
    // The answer goes out before the rest of the body: tell a keep-alive client the connection ends with it.
    if (closesAfterStop(req, read)) (res as ServerResponse).shouldKeepAlive = false;
    res.once('finish', () => stopReadingBody(req, read));
    return 'too large';
  };
  const declared = Number(req.headers['content-length']);
  if (Number.isSafeInteger(declared) && declared > max) return Promise.resolve(refuse(0));
  if (expectsContinue(req)) sendContinue();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (result: Buffer | 'too large' | undefined): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > max) done(refuse(size));
      else chunks.push(chunk);
    };
    const onEnd = (): void => done(Buffer.concat(chunks, size));
    // A close before the end: the visitor left (or its stream was reset) mid-body.
    const onClose = (): void => done(undefined);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
  });
}
