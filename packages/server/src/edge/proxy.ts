import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { ResetCode, StreamResetError, hasValidFields, type MuxStream } from '@svcrouter/protocol';
import type { EdgeExchange, VisitorWriter } from './exchange.js';
import { hasRequestBody } from './forwarding.js';
import type { EdgePage } from './pages.js';

type VisitorRequest = IncomingMessage | Http2ServerRequest;
type VisitorResponse = ServerResponse | Http2ServerResponse;

/** Sends one of the edge's own pages. */
export function sendPage(res: VisitorResponse, page: EdgePage): number {
  if (res.headersSent) {
    res.destroy();
    return page.status;
  }
  (res as ServerResponse).writeHead(page.status, page.headers);
  res.end(page.body);
  return page.status;
}

/**
 * Drives an exchange from a MuxStream's events, as a CallbackStream drives it directly. Body
 * events are listened for only once the head went out: until then the Duplex holds what
 * arrives (credit unreturned), so nothing reaches the visitor before its head.
 */
export function followStream(stream: MuxStream, exchange: EdgeExchange): void {
  stream.on('headers', (meta: unknown) => {
    if (!exchange.onHeaders(meta)) return;
    stream.on('data', (chunk: Buffer) => exchange.onData(chunk));
    stream.on('end', () => exchange.onEnd());
  });
  stream.on('error', (error: Error) => exchange.failed(error instanceof StreamResetError ? error.code : 'CANCEL'));
}

/**
 * The visitor's side of an exchange served by Node's HTTP/1.1 or HTTP/2 server (requests with a
 * body, HTTP/2, and whatever the lean path hands over). Made before routing, so a refusal is
 * written through it too; `forward` then proxies the request over the exchange's binding.
 */
export class NodeVisitor implements VisitorWriter {
  constructor(
    private readonly exchange: EdgeExchange,
    private readonly req: VisitorRequest,
    private readonly res: VisitorResponse,
  ) {
    exchange.respondThrough(this);
  }

  /**
   * Opens a stream, streams the body up, and lets the exchange answer from the stream's events.
   * Backpressure is end to end: a slow visitor stops reading the stream, which stops returning
   * credit, which pauses the agent, which pauses the origin.
   */
  forward(): void {
    const { exchange, req, res } = this;
    const withBody = hasRequestBody(req);
    const stream = exchange.open(req, 'request', withBody, (mux, head) => mux.open(head, !withBody));
    if (stream === undefined) return;
    if (withBody) {
      // Registered before the pipe, so the chunk that crossed a quota is not forwarded.
      req.on('data', (chunk: Buffer) => {
        if (!exchange.uploaded(chunk.length)) req.unpipe(stream);
      });
      req.pipe(stream);
    }
    followStream(stream, exchange);
    res.on('finish', () => {
      // The response is complete but the upload is not: the origin answered without reading it
      // all (a 413, a 401). Stop forwarding and let the rest drain here, as Node does for its own
      // handlers; the reset frees the stream on both sides, which would otherwise wait forever.
      if (withBody && !stream.writableFinished) {
        req.unpipe(stream);
        req.resume();
        stream.reset(ResetCode.CANCEL);
      }
      exchange.finish();
    });
    res.on('close', () => {
      if (res.writableFinished) exchange.finish();
      else exchange.visitorGone();
    });
  }

  sendPage(page: EdgePage): void {
    sendPage(this.res, page);
  }

  writeHead(status: number, headers: string[]): boolean {
    const res = this.res as ServerResponse;
    // Node's HTTP/1.1 writeHead refuses bad names and values itself (and throws); HTTP/2's are
    // checked here, as its encoder is not this strict.
    if (status < 200 || (this.req.httpVersionMajor === 2 && !hasValidFields(headers))) return false;
    try {
      res.writeHead(status, headers as unknown as Record<string, string>);
    } catch {
      return false;
    }
    res.on('drain', () => this.exchange.visitorDrained());
    // Node holds an HTTP/1.1 head back until the first body bytes. Frames that came in the same
    // read as the head have flowed by the check phase; when none did (an event stream, a long
    // poll), the visitor gets the head now, as the origin sent it. HTTP/2 sends it at once anyway.
    setImmediate(() => {
      if (this.exchange.bytesOut === 0 && !res.writableEnded && !res.destroyed) res.flushHeaders();
    });
    return true;
  }

  writeBody(chunk: Buffer): boolean {
    return (this.res as ServerResponse).write(chunk);
  }

  endBody(): void {
    // The exchange finishes on the response's 'finish'.
    this.res.end();
  }

  abort(): void {
    this.res.destroy();
  }
}
