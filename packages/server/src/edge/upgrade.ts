import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { ResetCode, StreamResetError, hasValidFields, isResponseHead, type ResponseHead } from '@svcrouter/protocol';
import { rawResponse, unreachablePage, upstreamErrorPage } from './pages.js';
import { finishExchange, type ByteMeter, type Exchange, type ExchangeObserver } from './exchange.js';
import { requestHead, responseHeaders } from './forwarding.js';
import type { AbsoluteTarget } from './request-target.js';
import type { Binding } from './router.js';

/**
 * Proxies a visitor's `Upgrade` request (WebSocket or any other protocol): the head goes up
 * as a stream marked as an upgrade; after the origin's 101 the stream carries raw bytes both
 * ways until either side closes. A non-101 answer is passed through and the socket closed.
 */
export function proxyUpgrade(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  binding: Binding,
  exchange: Exchange,
  secure: boolean,
  done: ExchangeObserver,
  meter?: ByteMeter,
  absolute?: AbsoluteTarget,
): void {
  let finished = false;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    finishExchange(exchange, done);
  };
  let stream;
  try {
    stream = binding.session.mux.open(requestHead(req, binding, exchange.host, exchange.ip, secure, 'upgrade', absolute));
  } catch {
    socket.destroy();
    return finish();
  }
  const tunnel = stream;
  socket.on('error', () => tunnel.reset(ResetCode.CANCEL));
  socket.on('close', () => {
    // A visitor that ended cleanly (FIN) may still have bytes on their way up the tunnel (the
    // pipe ends it after them): only an abrupt close cuts the stream.
    if (!socket.readableEnded) tunnel.reset(ResetCode.CANCEL);
    finish();
  });
  if (head.length > 0) {
    meter?.(binding.accountId, head.length);
    tunnel.write(head);
  }
  // Quota used up mid-transfer. The 'data' listeners below run before the pipes, so the chunk
  // that crossed the limit is not forwarded.
  const cutOff = (): void => {
    tunnel.reset(ResetCode.CANCEL);
    socket.destroy();
  };

  tunnel.on('headers', (meta: ResponseHead) => {
    // The agent is not trusted: the status goes on the status line and the headers below it,
    // so anything but an integer status and clean fields could write lines of its own.
    if (!isResponseHead(meta) || (meta.s < 200 && meta.s !== 101) || !hasValidFields(meta.h)) {
      tunnel.reset(ResetCode.UPSTREAM_ERROR);
      const page = upstreamErrorPage(exchange.host, 'invalid response headers');
      exchange.status = page.status;
      socket.end(rawResponse(page));
      finish();
      return;
    }
    exchange.status = meta.s;
    const lines = [`HTTP/1.1 ${meta.s} ${meta.s === 101 ? 'Switching Protocols' : 'Upstream Response'}`];
    const headers = meta.s === 101 ? meta.h : responseHeaders(meta.h);
    for (let i = 0; i < headers.length; i += 2) lines.push(`${headers[i]!}: ${headers[i + 1]!}`);
    if (meta.s !== 101) lines.push('connection: close');
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    tunnel.on('data', (chunk: Buffer) => {
      exchange.bytesOut += chunk.length;
      if (meter && !meter(binding.accountId, chunk.length)) cutOff();
    });
    socket.on('data', (chunk: Buffer) => {
      exchange.bytesIn += chunk.length;
      if (meter && !meter(binding.accountId, chunk.length)) cutOff();
    });
    tunnel.pipe(socket);
    // After a refusal nothing more goes up: ending our side lets the stream settle on both ends.
    if (meta.s === 101) socket.pipe(tunnel);
    else tunnel.end();
  });
  tunnel.on('error', (error: Error) => {
    if (exchange.status !== 0) {
      socket.destroy();
      return finish();
    }
    const code = error instanceof StreamResetError ? error.code : 'CANCEL';
    const page =
      code === ResetCode.UPSTREAM_UNREACHABLE
        ? unreachablePage(exchange.host, binding.local)
        : upstreamErrorPage(exchange.host, 'the local service failed');
    exchange.status = page.status;
    socket.end(rawResponse(page));
    finish();
  });
  tunnel.on('close', () => {
    if (!socket.destroyed) socket.end();
  });
}
