import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { ResetCode, hasValidFields, streamDuplex, type StreamDuplex } from '@svcrouter/protocol';
import type { EdgeExchange, VisitorWriter } from './exchange.js';
import { rawResponse, type EdgePage } from './pages.js';
import { followStream } from './proxy.js';

/**
 * The visitor's side of an `Upgrade` request (WebSocket or any other protocol), on the socket
 * Node's server hands over: the head goes up as a stream marked as an upgrade; after the
 * origin's 101 the stream carries raw bytes both ways until either side closes. A non-101
 * answer is passed through and the socket closed. Made before routing, so a refusal is written
 * through it too; `forward` then proxies the request over the exchange's binding.
 */
export class UpgradeVisitor implements VisitorWriter {
  private tunnel: StreamDuplex | undefined;

  constructor(
    private readonly exchange: EdgeExchange,
    private readonly req: IncomingMessage,
    private readonly socket: Duplex,
    /** Bytes the visitor sent after the request head, before any answer. */
    private readonly head: Buffer,
  ) {
    exchange.respondThrough(this);
  }

  forward(): void {
    const { exchange, socket, head } = this;
    // The stream carries raw bytes both ways once the origin agreed: a Duplex, piped from the socket.
    const tunnel = exchange.open(this.req, 'upgrade', false, (mux, requestHead) => streamDuplex(mux.open(requestHead)));
    if (tunnel === undefined) return;
    this.tunnel = tunnel;
    socket.on('error', () => tunnel.reset(ResetCode.CANCEL));
    socket.on('close', () => {
      // A visitor that ended cleanly (FIN) may still have bytes on their way up the tunnel (the
      // pipe ends it after them): only an abrupt close cuts the stream.
      if (socket.readableEnded) exchange.finish();
      else exchange.visitorGone();
    });
    if (head.length > 0 && exchange.uploaded(head.length)) tunnel.write(head);
    followStream(tunnel, exchange);
    tunnel.on('close', () => {
      if (!socket.destroyed) socket.end();
    });
  }

  sendPage(page: EdgePage): void {
    this.socket.end(rawResponse(page));
  }

  writeInterim(): void {
    // An upgrade asks for no 1xx heads (no `i` on its OPEN): a 101 is its only interim answer.
  }

  writeHead(status: number, headers: string[]): boolean {
    // The agent is not trusted: the status goes on the status line and the headers below it,
    // so anything but a 101 or a final status and clean fields could write lines of its own.
    if ((status < 200 && status !== 101) || !hasValidFields(headers)) return false;
    const { exchange, socket } = this;
    const tunnel = this.tunnel!;
    const lines = [`HTTP/1.1 ${status} ${status === 101 ? 'Switching Protocols' : 'Upstream Response'}`];
    for (let i = 0; i < headers.length; i += 2) lines.push(`${headers[i]!}: ${headers[i + 1]!}`);
    if (status !== 101) lines.push('connection: close');
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    socket.on('drain', () => exchange.visitorDrained());
    // Registered before the pipe, so the chunk that crossed a quota is not forwarded.
    socket.on('data', (chunk: Buffer) => {
      exchange.uploaded(chunk.length);
    });
    // After a refusal nothing more goes up: ending our side lets the stream settle on both ends.
    if (status === 101) socket.pipe(tunnel);
    else tunnel.end();
    return true;
  }

  writeBody(chunk: Buffer): boolean {
    // Once the socket is gone, nothing can reach the visitor: the bytes are dropped, not held.
    if (this.socket.destroyed) return true;
    return this.socket.write(chunk);
  }

  endBody(): void {
    // Trailers have no place on a raw socket. The exchange finishes when the socket closes.
    this.socket.end();
  }

  abort(): void {
    // Raw bytes have no framing to show a cut: a FIN would read as the origin's clean close, so a
    // plain TCP visitor gets a reset. A TLS socket's reset is not reachable from here; its
    // missing close_notify is the sign there.
    const socket = this.socket as Duplex & { resetAndDestroy?: () => void; encrypted?: boolean };
    if (socket.destroyed) return;
    if (socket.encrypted !== true && typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
    else socket.destroy();
  }

  stopUpload(): void {
    // Never asked: an upgraded connection's bytes are not a body the origin can answer early.
  }
}
