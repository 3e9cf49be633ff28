import {
  ResetCode,
  isResponseHead,
  trailerFields,
  type CallbackStream,
  type CallbackStreamHandler,
  type ResponseHead,
  type StreamResetError,
} from '@svcrouter/protocol';
import { offlinePage, unreachablePage, upstreamErrorPage } from '../pages.js';
import { finishExchange, type ByteMeter, type Exchange, type ExchangeObserver } from '../exchange.js';
import { requestHead, responseHeaders } from '../forwarding.js';
import type { Binding } from '../router.js';
import type { LeanRequest } from './request-head.js';
import { visitorInterimHead, visitorResponseHead } from './response-head.js';
import type { ResponseOwner, VisitorConnection } from './visitor-connection.js';

/**
 * Proxies one body-less request read by the lean path: the same exchange as proxy.ts (pages for
 * every failure before the head, a closed connection after it, metering, backpressure from the
 * visitor's socket to the stream), written straight to the visitor's socket instead of through
 * Node's IncomingMessage and ServerResponse.
 */
export function proxyLean(
  connection: VisitorConnection,
  request: LeanRequest,
  binding: Binding,
  exchange: Exchange,
  done: ExchangeObserver,
  meter?: ByteMeter,
): void {
  const head = requestHead(
    { rawHeaders: request.rawHeaders, method: request.method, url: request.target },
    binding,
    exchange.host,
    exchange.ip,
    connection.secure,
    'request',
  );
  const lean = new LeanExchange(connection, request.method, binding, exchange, done, meter);
  try {
    lean.stream = binding.session.mux.openCallbackStream(head, lean, true);
  } catch {
    exchange.status = connection.sendPage(offlinePage(exchange.host));
    finishExchange(exchange, done);
    return;
  }
  connection.adopt(lean);
}

/** The response of one lean request: the handler of its stream, and the owner of the visitor's connection meanwhile. */
class LeanExchange implements ResponseOwner, CallbackStreamHandler {
  stream!: CallbackStream;
  /** Once set, nothing more is done: the exchange was observed, and its stream ended or was reset. */
  private settled = false;

  constructor(
    private readonly connection: VisitorConnection,
    private readonly method: string,
    private readonly binding: Binding,
    private readonly exchange: Exchange,
    private readonly done: ExchangeObserver,
    private readonly meter: ByteMeter | undefined,
  ) {}

  onVisitorDrain(): void {
    this.stream.resume();
  }

  onVisitorGone(): void {
    // The visitor left before the response completed: tell the agent to stop the origin.
    this.stream.reset(ResetCode.CANCEL);
    this.settle();
  }

  /** 103 Early Hints and the like: passed on as they come; a malformed one is dropped. */
  onInfo(meta: unknown): void {
    if (this.settled || this.exchange.status !== 0 || !isResponseHead(meta)) return;
    const text = visitorInterimHead(meta.s, responseHeaders(meta.h));
    if (text !== undefined) this.connection.writeInterim(text);
  }

  onHeaders(meta: unknown): void {
    const exchange = this.exchange;
    // The agent is not trusted: a head of the wrong shape never reaches the visitor or the
    // inspector (visitorResponseHead checks names, values and the status's range).
    const head = isResponseHead(meta)
      ? visitorResponseHead(meta.s, responseHeaders(meta.h), this.method, this.connection.keepAlive)
      : undefined;
    if (!head) {
      this.stream.reset(ResetCode.UPSTREAM_ERROR);
      exchange.status = this.connection.sendPage(upstreamErrorPage(exchange.host, 'invalid response headers'));
      this.settle();
      return;
    }
    exchange.status = (meta as ResponseHead).s;
    this.connection.startBody(head);
  }

  onData(chunk: Buffer): void {
    if (this.settled) return;
    if (this.exchange.status === 0) return this.bodyBeforeHead();
    this.exchange.bytesOut += chunk.length;
    if (this.meter && !this.meter(this.binding.accountId, chunk.length)) return this.cutOff();
    if (!this.connection.writeBody(chunk)) this.stream.pause();
  }

  onEnd(): void {
    if (this.settled) return;
    this.connection.endBody(this.stream.trailers === undefined ? undefined : trailerFields(this.stream.trailers));
    this.settle();
  }

  onReset(error: StreamResetError): void {
    if (this.settled) return;
    const exchange = this.exchange;
    if (exchange.status !== 0) {
      // The head is out: the visitor can only learn of the failure by the connection closing.
      this.connection.abort();
    } else {
      const code = error.code;
      exchange.status = this.connection.sendPage(
        code === ResetCode.UPSTREAM_UNREACHABLE
          ? unreachablePage(exchange.host, this.binding.local)
          : upstreamErrorPage(exchange.host, code === 'SESSION_CLOSED' ? 'the agent disconnected' : 'the local service failed'),
      );
    }
    this.settle();
  }

  /**
   * The agent sent body bytes before the response head. Written now they would go out in the
   * framing of the connection's previous response, or as its next head: a visitor's kept-alive
   * connection must never carry bytes the agent framed itself.
   */
  private bodyBeforeHead(): void {
    this.stream.reset(ResetCode.UPSTREAM_ERROR);
    this.exchange.status = this.connection.sendPage(upstreamErrorPage(this.exchange.host, 'a response body before its head'));
    this.settle();
  }

  /** The account's transfer quota ran out mid-response: both directions stop, the chunk is not forwarded. */
  private cutOff(): void {
    this.stream.reset(ResetCode.CANCEL);
    this.connection.abort();
    this.settle();
  }

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    finishExchange(this.exchange, this.done);
  }
}
