import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import {
  Feature,
  ResetCode,
  StreamResetError,
  hasValidFields,
  isResponseHead,
  type MuxStream,
  type ResponseHead,
} from '@svcrouter/protocol';
import { finishExchange, type ByteMeter, type Exchange, type ExchangeObserver } from './exchange.js';
import { hasRequestBody, requestHead, responseHeaders } from './forwarding.js';
import { expectsContinue, forwardInterim, stopReadingBody } from './interim.js';
import { bandwidthPage, offlinePage, unreachablePage, upstreamErrorPage, type EdgePage } from './pages.js';
import type { AbsoluteTarget } from './request-target.js';
import { chunkedForVisitor, endWithTrailers, requestTrailers, setH2Head } from './trailers.js';
import type { Binding } from './router.js';

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
 * Proxies one visitor request over the binding's session: opens a stream, streams the body
 * up, waits for the response head, streams the body down. Backpressure is end to end: a slow
 * visitor stops reading the stream, which stops returning credit, which pauses the agent,
 * which pauses the origin. Calls `done` exactly once with the exchange's outcome.
 */
export function proxyRequest(
  req: VisitorRequest,
  res: VisitorResponse,
  binding: Binding,
  exchange: Exchange,
  secure: boolean,
  done: ExchangeObserver,
  meter?: ByteMeter,
  absolute?: AbsoluteTarget,
): void {
  const withBody = hasRequestBody(req);
  // `Expect: 100-continue` goes to the origin, whose 100 (or refusal) comes back as INFO; an
  // agent too old to relay it gets the request without it, and the edge answers 100 itself.
  const expectation = expectsContinue(req);
  const forwardExpect = expectation && binding.session.agentFeatures?.has(Feature.INFO) === true;
  if (expectation && !forwardExpect) (res as ServerResponse).writeContinue();
  const head = requestHead(req, binding, exchange.host, exchange.ip, secure, 'request', absolute, forwardExpect);
  // The agent reads `b` to decide whether to stream a body to the origin: without it the body is dropped.
  if (withBody) head.b = 1;
  let stream: MuxStream;
  try {
    stream = binding.session.mux.open(head, !withBody);
  } catch {
    exchange.status = sendPage(res, offlinePage(exchange.host));
    return finish();
  }
  let finished = false;
  function finish(): void {
    if (finished) return;
    finished = true;
    finishExchange(exchange, done);
  }
  // Quota used up mid-transfer. Runs inside a 'data' listener registered before the pipe, so
  // the chunk that crossed the limit is not forwarded; both directions stop.
  let cut = false;
  /**
   * The agent's answer ended and was handed to `res`. Node's HTTP/2 compatibility layer reports
   * a response the visitor cancelled (RST_STREAM) as finished, so `writableFinished` alone
   * cannot tell that the visitor left.
   */
  let responseEnded = false;
  function cutOff(): void {
    cut = true;
    if (withBody) req.unpipe(stream);
    stream.reset(ResetCode.CANCEL);
    if (res.headersSent) res.destroy();
    else exchange.status = sendPage(res, bandwidthPage());
  }

  const onBody = (chunk: Buffer): void => {
    exchange.bytesIn += chunk.length;
    if (meter && !cut && !meter(binding.accountId, chunk.length)) cutOff();
  };
  if (withBody) {
    req.on('data', onBody);
    // Ended by hand: the request's trailers, if any, travel with the end.
    req.pipe(stream, { end: false });
    req.on('end', () => {
      if (!cut && !stream.destroyed) stream.endWithTrailers(requestTrailers(req));
    });
  }
  stream.on('info', (meta: unknown) => forwardInterim(req, res, meta, responseHeaders));
  stream.on('headers', (meta: ResponseHead) => {
    // The agent is not trusted. Node's HTTP/1.1 writeHead refuses bad names and values itself
    // (and throws); HTTP/2's is checked here, as its encoder is not this strict.
    const valid = isResponseHead(meta) && meta.s >= 200 && (req.httpVersionMajor !== 2 || hasValidFields(meta.h));
    try {
      if (!valid) throw new Error('invalid response head');
      if (req.httpVersionMajor === 2) setH2Head(res as Http2ServerResponse, meta.s, responseHeaders(meta.h));
      else {
        const headers = responseHeaders(meta.h, chunkedForVisitor(req, meta.s, meta.h));
        (res as ServerResponse).writeHead(meta.s, headers as unknown as Record<string, string>);
      }
    } catch {
      stream.reset(ResetCode.UPSTREAM_ERROR);
      exchange.status = sendPage(res, upstreamErrorPage(exchange.host, 'invalid response headers'));
      return;
    }
    exchange.status = meta.s;
    // A hand-written pipe: metering and forwarding in one listener, and none of pipe()'s eight
    // listeners per request. Backpressure as pipe(): pause on a full visitor socket, resume on drain.
    stream.on('data', (chunk: Buffer) => {
      exchange.bytesOut += chunk.length;
      if (meter && !cut && !meter(binding.accountId, chunk.length)) return cutOff();
      if (!(res as ServerResponse).write(chunk)) stream.pause();
    });
    stream.on('end', () => {
      responseEnded = true;
      endWithTrailers(res, stream.trailers);
    });
    res.on('drain', () => stream.resume());
    // Node holds an HTTP/1.1 head back until the first body bytes. Frames that came in the same
    // read as the head have flowed by the check phase; when none did (an event stream, a long
    // poll), the visitor gets the head now, as the origin sent it. HTTP/2 sends it at once anyway.
    setImmediate(() => {
      if (exchange.bytesOut === 0 && !res.writableEnded && !res.destroyed) (res as ServerResponse).flushHeaders();
    });
  });
  stream.on('error', (error: Error) => {
    if (res.headersSent) {
      res.destroy();
      return finish();
    }
    const code = error instanceof StreamResetError ? error.code : 'CANCEL';
    exchange.status = sendPage(
      res,
      code === ResetCode.UPSTREAM_UNREACHABLE
        ? unreachablePage(exchange.host, binding.local)
        : upstreamErrorPage(exchange.host, code === 'SESSION_CLOSED' ? 'the agent disconnected' : 'the local service failed'),
    );
    finish();
  });
  // The response is complete but the upload is not: the origin answered without reading it
  // all (a 413, a 401, an early 200). Stop forwarding; the reset frees the stream on both
  // sides, which would otherwise wait forever, and the visitor is told to stop sending.
  let answeredOnce = false;
  const answered = (): void => {
    if (!withBody || answeredOnce || stream.writableFinished) return;
    answeredOnce = true;
    // What the edge reads from here on is dropped, not forwarded: it is neither counted nor metered.
    req.off('data', onBody);
    req.unpipe(stream);
    stream.reset(ResetCode.NO_ERROR);
    stopReadingBody(req, exchange.bytesIn);
  };
  // HTTP/2's compatibility response finishes only once the whole stream closed, upload included:
  // its own stream's write side says when the answer is out.
  if (req.httpVersionMajor === 2) (req as Http2ServerRequest).stream.once('finish', answered);
  res.on('finish', () => {
    answered();
    finish();
  });
  res.on('close', () => {
    // The visitor left before the response completed: tell the agent to stop the origin.
    if (!res.writableFinished || !responseEnded) stream.reset(ResetCode.CANCEL);
    finish();
  });
}
