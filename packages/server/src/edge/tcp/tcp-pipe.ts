import type { Socket } from 'node:net';
import { ResetCode, SocketPipe, TCP_CONNECTED, tcpHead, type CallbackStream, type IdTable } from '@svcrouter/protocol';
import type { ByteMeter, Exchange, ExchangeObserver } from '../exchange.js';
import type { Binding } from '../router.js';

/** The inspector statuses of a TCP connection's record (see docs/api.md). */
export const TcpStatus = {
  /** Closed by either side after the local service accepted it. */
  CLOSED: 200,
  /** The agent closed it after `--idle-timeout` without a byte either way. */
  IDLE: 408,
  /** The account's monthly transfer quota ran out: cut. */
  BANDWIDTH: 429,
  /** The visitor reset the connection (not a clean close). */
  VISITOR_RESET: 499,
  /** The agent could not connect to the local service (refused, unreachable). */
  UNREACHABLE: 502,
  /** The local service or the agent failed mid-connection, or the agent's session ended. */
  FAILED: 503,
} as const;

/** What every visitor connection of the edge's TCP tunnels shares. */
export interface TcpPipeDeps {
  observe: ExchangeObserver;
  meter: ByteMeter | undefined;
}

/** A TLS passthrough connection (edge/tls/): recorded as `TLS`, with the ClientHello the edge read to route it. */
export interface TlsVisitor {
  /** The ClientHello's server name, the record's host. */
  serverName: string;
  /** The bytes read off the socket before it was handed over (the ClientHello); they go first. */
  head: Buffer;
}

/**
 * Carries one visitor connection over its binding's session: one mux stream with a TCP head,
 * then raw bytes both ways. Backpressure is the pipes': a slow side stops reading the other, so
 * nothing grows beyond the stream windows. A FIN travels on its own (half-close); the record is
 * written once the visitor's socket has closed. This is the whole edge-side byte pipe.
 *
 * Until it closes, the socket is in `open` (its listener's, cut when the tunnel goes) and, when
 * `binding` is a pool member, counts among the member's connections in flight.
 */
export function pipeTcpVisitor(
  socket: Socket,
  binding: Binding,
  port: number,
  deps: TcpPipeDeps,
  open: IdTable<Socket>,
  tls?: TlsVisitor,
): void {
  const id = open.add(socket);
  const member = binding.pool !== undefined ? binding : undefined;
  if (member !== undefined) member.inFlight!++;
  const ip = stripMapped(socket.remoteAddress ?? '');
  const record: Exchange = {
    binding,
    host: tls === undefined ? binding.hostname : tls.serverName,
    method: tls === undefined ? 'TCP' : 'TLS',
    path: '',
    status: 0,
    startedAt: performance.now(),
    durationMs: 0,
    bytesIn: 0,
    bytesOut: 0,
    ip,
    userAgent: '',
    proto: tls === undefined ? 'tcp' : 'tls',
  };
  let stream: CallbackStream;
  try {
    stream = binding.session.mux.open(tcpHead(binding.tunnelId, `${ip}:${socket.remotePort ?? 0}`, port));
  } catch {
    // The session closed between routing and opening: as if the agent had gone.
    record.status = TcpStatus.FAILED;
    socket.destroy();
    finish();
    return;
  }
  let cut = false;
  // Bytes of the visitor's that crossed before the agent's CONNECTED head: a refused local
  // connection never delivers them, so they are metered and recorded only once it connects.
  let connected = false;
  let early = 0;
  const { meter } = deps;
  const metered = (bytes: number): boolean => {
    if (cut) return false;
    if (meter === undefined || meter(binding.accountId, bytes)) return true;
    // Quota used up: both directions stop, and the chunk that crossed it is not forwarded.
    cut = true;
    record.status = TcpStatus.BANDWIDTH;
    stream.reset(ResetCode.CANCEL);
    socket.destroy();
    return false;
  };
  const pipe = new SocketPipe(socket, stream, {
    fromSocket(chunk) {
      if (!connected) {
        early += chunk.length;
        return true;
      }
      record.bytesIn += chunk.length;
      return metered(chunk.length);
    },
    fromStream(chunk) {
      record.bytesOut += chunk.length;
      return metered(chunk.length);
    },
    onHeaders(meta) {
      if ((meta as { s?: unknown } | null)?.s !== TCP_CONNECTED) return;
      if (record.status === 0) record.status = TcpStatus.CLOSED;
      connected = true;
      if (early === 0) return;
      record.bytesIn += early;
      // Over the quota: cut now, as a chunk would be (the bytes are with the agent already).
      metered(early);
      early = 0;
    },
    onReset(error) {
      if (record.status === 0 || record.status === TcpStatus.CLOSED) record.status = statusOfReset(error.code, record.status === 0);
    },
  });
  if (tls !== undefined && tls.head.length > 0) {
    early += tls.head.length;
    stream.write(tls.head);
  }
  pipe.start();
  socket.on('error', () => {
    if (record.status === TcpStatus.CLOSED) record.status = TcpStatus.VISITOR_RESET;
    stream.reset(ResetCode.CANCEL);
  });
  socket.on('close', () => {
    // Both ends cleanly done: the stream has closed too. Anything else cuts it.
    if (!pipe.cleanlyEnded) stream.reset(ResetCode.CANCEL);
    if (record.status === 0) record.status = TcpStatus.VISITOR_RESET;
    finish();
  });

  function finish(): void {
    record.durationMs = performance.now() - record.startedAt;
    deps.observe(record);
    open.delete(id);
    if (member !== undefined) member.inFlight!--;
  }
}

/** The record's status for a reset from the agent; `beforeConnect`: the local connection never came up. */
function statusOfReset(code: string, beforeConnect: boolean): number {
  if (code === ResetCode.UPSTREAM_UNREACHABLE) return TcpStatus.UNREACHABLE;
  if (code === ResetCode.IDLE_TIMEOUT) return TcpStatus.IDLE;
  if (code === ResetCode.NO_ERROR) return TcpStatus.CLOSED;
  return beforeConnect ? TcpStatus.UNREACHABLE : TcpStatus.FAILED;
}

function stripMapped(address: string): string {
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}
