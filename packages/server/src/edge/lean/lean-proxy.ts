import type { CallbackStream, Mux, RequestHead } from '@svcrouter/protocol';
import type { EdgeExchange, VisitorWriter } from '../exchange.js';
import type { EdgePage } from '../pages.js';
import type { LeanRequest } from './request-head.js';
import { visitorInterimHead, visitorResponseHead } from './response-head.js';
import type { ResponseOwner, VisitorConnection } from './visitor-connection.js';

/**
 * The visitor's side of a body-less request read by the lean path: the exchange's response
 * written straight to the visitor's socket (VisitorConnection) instead of through Node's
 * IncomingMessage and ServerResponse. It owns the connection's response side meanwhile, and
 * tells the exchange when the visitor drains or leaves. Made before routing, so a refusal is
 * written through it too; `forward` then proxies the request over the exchange's binding.
 */
export class LeanVisitor implements VisitorWriter, ResponseOwner {
  constructor(
    private readonly exchange: EdgeExchange,
    private readonly connection: VisitorConnection,
    private readonly request: LeanRequest,
  ) {
    exchange.respondThrough(this);
  }

  /** The exchange drives the stream itself (it is the CallbackStream's handler), with no Duplex between. */
  forward(): void {
    const { exchange, request } = this;
    const source = { rawHeaders: request.rawHeaders, method: request.method, url: request.target };
    const open = (mux: Mux, head: RequestHead): CallbackStream => mux.open(head, exchange, true);
    if (exchange.binding!.pool !== undefined) exchange.retryWith(() => exchange.open(source, 'request', false, open));
    const stream = exchange.open(source, 'request', false, open);
    if (stream !== undefined) this.connection.adopt(this);
  }

  sendPage(page: EdgePage): void {
    this.connection.sendPage(page);
  }

  writeInterim(status: number, headers: string[]): void {
    // visitorInterimHead drops a head this connection must not carry (a bad name or value).
    const text = visitorInterimHead(status, headers);
    if (text !== undefined) this.connection.writeInterim(text);
  }

  writeHead(status: number, headers: string[]): boolean {
    // visitorResponseHead checks names, values and the status's range, as Node's writeHead would.
    const head = visitorResponseHead(status, headers, this.request.method, this.connection.keepAlive);
    if (head === undefined) return false;
    this.connection.startBody(head);
    return true;
  }

  writeBody(chunk: Buffer): boolean {
    return this.connection.writeBody(chunk);
  }

  endBody(trailers: readonly string[] | undefined): void {
    this.connection.endBody(trailers);
    this.exchange.finish();
  }

  abort(): void {
    // One way on HTTP/1.1 whatever the cause: the connection closes, a chunked body without its end.
    this.connection.abort();
  }

  stopUpload(): void {
    // Body-less requests only: there is no upload to stop.
  }

  onVisitorDrain(): void {
    this.exchange.visitorDrained();
  }

  onVisitorGone(): void {
    this.exchange.visitorGone();
  }
}
