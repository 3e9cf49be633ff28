import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants as h2, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { StreamResetError, hasValidFields, streamDuplex, type Mux, type RequestHead, type StreamDuplex } from '@svcrouter/protocol';
import type { CutCode, EdgeExchange, VisitorWriter } from './exchange.js';
import { hasRequestBody, responseHeaders } from './forwarding.js';
import { expectsContinue, stopReadingBody, writeInterim } from './interim.js';
import type { EdgePage } from './pages.js';
import { readWholeBody } from './read-body.js';
import { chunkedForVisitor, endWithTrailers, requestTrailers, setH2Head } from './trailers.js';

type VisitorRequest = IncomingMessage | Http2ServerRequest;
type VisitorResponse = ServerResponse | Http2ServerResponse;

/** Sends one of the edge's own pages. */
export function sendPage(res: VisitorResponse, page: EdgePage): number {
  if (res.headersSent) {
    res.destroy();
    return page.status;
  }
  try {
    (res as ServerResponse).writeHead(page.status, page.headers);
  } catch {
    // A header the policy checks let through but Node will not write: answer, never throw.
    (res as ServerResponse).writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
    res.end("The edge could not write this answer of the tunnel's rules.\n");
    return 500;
  }
  res.end(page.body);
  return page.status;
}

/**
 * Drives an exchange from a StreamDuplex's events, as a CallbackStream drives it directly. Body
 * events are listened for only once the head went out: until then the Duplex holds what
 * arrives (credit unreturned), so nothing reaches the visitor before its head.
 */
export function followStream(stream: StreamDuplex, exchange: EdgeExchange): void {
  stream.on('info', (meta: unknown) => exchange.onInfo(meta));
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
  /** Counts and meters the body as it is read; taken off once the origin answered early. */
  private onUpload: ((chunk: Buffer) => void) | undefined = undefined;
  private stream: StreamDuplex | undefined = undefined;
  /**
   * The agent's answer ended and was handed to `res`. Node's HTTP/2 compatibility layer reports
   * a response the visitor cancelled (RST_STREAM) as finished, so `writableFinished` alone
   * cannot tell that the visitor left.
   */
  private responseEnded = false;

  constructor(
    private readonly exchange: EdgeExchange,
    private readonly req: VisitorRequest,
    private readonly res: VisitorResponse,
  ) {
    exchange.respondThrough(this);
  }

  /**
   * Opens a stream as a Duplex (the request body is piped into it), streams the body up, and
   * lets the exchange answer from the Duplex's events. Backpressure is end to end: a slow visitor stops reading the stream, which stops returning
   * credit, which pauses the agent, which pauses the origin.
   */
  forward(): void {
    const { exchange, req, res } = this;
    const withBody = hasRequestBody(req);
    // A pool member that failed first: the exchange sends the request again over another (see EdgeExchange.retried).
    if (exchange.binding!.pool !== undefined) exchange.retryWith(() => this.send(withBody));
    if (!this.send(withBody)) return;
    const responded = (): void => exchange.responded(withBody && !this.stream!.writableFinished);
    // HTTP/2's compatibility response finishes only once the whole stream closed, upload included:
    // its own stream's write side says when the answer is out.
    if (req.httpVersionMajor === 2) (req as Http2ServerRequest).stream.once('finish', responded);
    res.on('finish', () => {
      responded();
      exchange.finish();
    });
    res.on('close', () => {
      if (res.writableFinished && this.responseEnded) exchange.finish();
      else exchange.visitorGone();
    });
  }

  /** Opens the stream over the exchange's binding and sends the request (its body piped) into it; false: refused. */
  private send(withBody: boolean): boolean {
    const { exchange, req } = this;
    if (exchange.requestBody !== undefined) return this.sendRead(withBody, exchange.requestBody);
    const open = (mux: Mux, head: RequestHead): StreamDuplex => streamDuplex(mux.open(head, undefined, !withBody));
    const stream = exchange.open(req, 'request', withBody, open, expectsContinue(req));
    if (stream === undefined) return false;
    // A retry: none of the body was read yet (or there is none), so the new stream gets all of it.
    if (this.stream !== undefined) req.unpipe(this.stream);
    this.stream = stream;
    if (withBody) {
      if (this.onUpload === undefined) {
        // Registered before the pipe, so the chunk that crossed a quota is not forwarded.
        this.onUpload = (chunk: Buffer) => {
          if (!exchange.uploaded(chunk.length)) req.unpipe(this.stream);
        };
        req.on('data', this.onUpload);
        // Ended by hand: the request's trailers, if any, travel with the end.
        req.on('end', () => {
          if (!this.stream!.destroyed) this.stream!.endWithTrailers(requestTrailers(req));
        });
      }
      req.pipe(stream, { end: false });
    }
    followStream(stream, exchange);
    return true;
  }

  /**
   * Sends a request whose body was read whole (a webhook check): from memory, with the visitor's
   * trailers. Metered once, at the first send; a pool retry sends the same bytes again.
   */
  private sendRead(withBody: boolean, body: Buffer): boolean {
    const { exchange, req } = this;
    const first = this.stream === undefined;
    const open = (mux: Mux, head: RequestHead): StreamDuplex => streamDuplex(mux.open(head, undefined, !withBody));
    const stream = exchange.open(req, 'request', withBody, open);
    if (stream === undefined) return false;
    this.stream = stream;
    if (first && body.length > 0 && !exchange.uploaded(body.length)) return false;
    followStream(stream, exchange);
    if (withBody) {
      if (body.length > 0) stream.write(body);
      stream.endWithTrailers(requestTrailers(req));
    }
    return true;
  }

  /** Reads the whole body for a webhook check, at most `max` bytes (see TrafficVisitor). */
  readBody(max: number): Promise<Buffer | 'too large' | undefined> {
    return readWholeBody(this.req, this.res, max, () => this.writeInterim(100, []));
  }

  sendPage(page: EdgePage): void {
    sendPage(this.res, page);
  }

  writeInterim(status: number, headers: string[]): void {
    writeInterim(this.req, this.res, status, headers);
  }

  writeHead(status: number, headers: string[]): boolean {
    const { req, res } = this;
    // Node's HTTP/1.1 writeHead refuses bad names and values itself (and throws); HTTP/2's are
    // checked here, as its encoder is not this strict.
    const h2 = req.httpVersionMajor === 2;
    if (status < 200 || (h2 && !hasValidFields(headers))) return false;
    try {
      if (h2) setH2Head(res as Http2ServerResponse, status, headers);
      else {
        // Node refuses a `Trailer` header on a response it will not chunk: nowhere to put them.
        const fields = chunkedForVisitor(req, status, headers) ? headers : responseHeaders(headers, false);
        (res as ServerResponse).writeHead(status, fields as unknown as Record<string, string>);
      }
    } catch {
      return false;
    }
    res.on('drain', () => this.exchange.visitorDrained());
    // Node holds an HTTP/1.1 head back until the first body bytes. Frames that came in the same
    // read as the head have flowed by the check phase; when none did (an event stream, a long
    // poll), the visitor gets the head now, as the origin sent it. HTTP/2 sends it at once anyway.
    setImmediate(() => {
      if (this.exchange.bytesOut === 0 && !res.writableEnded && !res.destroyed) (res as ServerResponse).flushHeaders();
    });
    return true;
  }

  writeBody(chunk: Buffer): boolean {
    return (this.res as ServerResponse).write(chunk);
  }

  endBody(trailers: readonly string[] | undefined): void {
    // The exchange finishes on the response's 'finish'.
    this.responseEnded = true;
    endWithTrailers(this.res, trailers);
  }

  abort(code: CutCode): void {
    const { req, res } = this;
    if (req.httpVersionMajor !== 2) {
      res.destroy();
      return;
    }
    // Destroying the compatibility response would close the stream with NO_ERROR: a clean end
    // to the visitor, who would take the body so far as complete.
    const stream = (res as Http2ServerResponse).stream;
    if (!stream.closed && !stream.destroyed) stream.close(code === 'CANCEL' ? h2.NGHTTP2_CANCEL : h2.NGHTTP2_INTERNAL_ERROR);
  }

  stopUpload(bytesRead: number): void {
    // What the edge reads from here on is dropped, not forwarded: it is neither counted nor metered.
    if (this.onUpload) this.req.off('data', this.onUpload);
    if (this.stream) this.req.unpipe(this.stream);
    stopReadingBody(this.req, bytesRead);
  }
}
