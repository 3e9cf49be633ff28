import net, { type Socket } from 'node:net';
import { TLSSocket, type SecureContext } from 'node:tls';
import type { Duplex } from 'node:stream';
import { ResetCode, TCP_CONNECTED_HEAD, isTcpHead, streamDuplex, type CallbackStream, type RequestHead } from '@svcrouter/protocol';
import { proxyProtocolHeader, type ProxyProtocolVersion } from './proxy-protocol.js';

/** Default `--idle-timeout`: a TCP connection with no byte either way for this long is closed. */
export const DEFAULT_TCP_IDLE_TIMEOUT_MS = 3_600_000;
/** A local service that closes within this long after a PROXY header likely does not speak PROXY protocol. */
const PROXY_HINT_MS = 1000;

/** A TCP tunnel's local service: `host:port`. */
export interface TcpTarget {
  host: string;
  port: number;
  /** `host:port`, as shown. */
  hostPort: string;
}

/** One visitor connection of a TCP tunnel, reported as it closes. */
export interface TcpConnectionLog {
  /** The visitor's address, `ip:port`. */
  visitor: string;
  durationMs: number;
  /** Bytes from the visitor to the local service. */
  bytesIn: number;
  /** Bytes from the local service to the visitor. */
  bytesOut: number;
  /** How it ended: `closed`, `refused` (the local service could not be reached), `idle`, `reset`. */
  outcome: 'closed' | 'refused' | 'idle' | 'reset';
  /** Why it could not connect, or a hint (PROXY protocol), when there is one. */
  detail?: string;
}

/** Options of a TCP tunnel's connections. */
export interface TcpProxyOptions {
  /** Closes a connection after this long without a byte either way (default DEFAULT_TCP_IDLE_TIMEOUT_MS; 0: never). */
  idleTimeoutMs?: number;
  /** Sends a PROXY protocol header with the visitor's address first (default none). */
  proxyProtocol?: ProxyProtocolVersion;
  /**
   * A TLS tunnel whose agent terminates TLS (`--tls-cert`/`--tls-key`): the visitor's stream is
   * decrypted here with this context and the local service gets plain bytes.
   */
  terminate?: SecureContext;
}

/** Parses what a user types after `svc tcp`: `22` or `host:22`. Returns an error sentence instead of throwing. */
export function parseTcpTarget(input: string | number): TcpTarget | string {
  const text = String(input).trim();
  const match = /^(?:(\[[^\]]+\]|[^:\s]+):)?(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  if (!match || port < 1 || port > 65535) return `invalid local address "${text}": expected a port or host:port`;
  const host = (match[1] ?? 'localhost').replace(/^\[|\]$/g, '');
  return { host, port, hostPort: `${match[1] ?? 'localhost'}:${port}` };
}

/**
 * Serves a TCP tunnel's visitor connections: each arrives as a raw mux stream (its head carries the
 * visitor's address), is connected to the local service, answered with CONNECTED, then piped both
 * ways with the stream's flow control. A FIN travels on its own (half-close); a refused local port
 * resets the stream at once, which closes the visitor's connection.
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();

  constructor(
    readonly target: TcpTarget,
    private readonly onLog: (log: TcpConnectionLog) => void,
    private readonly options: TcpProxyOptions = {},
  ) {}

  /** Serves one visitor connection. Never throws; failures reset the stream. */
  handle(callbacks: CallbackStream): void {
    const head = callbacks.meta as RequestHead;
    if (!isTcpHead(head)) {
      // An HTTP request on a TCP tunnel: the edge routes by port, so it is a bug, not a visitor's.
      callbacks.reset(ResetCode.UPSTREAM_ERROR);
      return;
    }
    // Bytes both ways are piped, so the stream is read as a Duplex with its flow control.
    const stream = streamDuplex(callbacks);
    stream.on('error', () => undefined);
    const started = performance.now();
    const visitor = typeof head.a === 'string' ? head.a : '';
    const log: TcpConnectionLog = { visitor, durationMs: 0, bytesIn: 0, bytesOut: 0, outcome: 'closed' };
    const socket = net.connect({ host: this.target.host, port: this.target.port, allowHalfOpen: true });
    this.sockets.add(socket);
    let connected = false;
    let proxyHeaderAt = 0;
    socket.once('connect', () => {
      connected = true;
      socket.setNoDelay(true);
      socket.setKeepAlive(true, 60_000);
      const version = this.options.proxyProtocol;
      if (version) {
        socket.write(proxyProtocolHeader(version, visitor || undefined, typeof head.o === 'number' ? head.o : 0));
        proxyHeaderAt = performance.now();
      }
      stream.sendHeaders(TCP_CONNECTED_HEAD);
      stream.on('data', (chunk: Buffer) => (log.bytesIn += chunk.length));
      socket.on('data', (chunk: Buffer) => (log.bytesOut += chunk.length));
      const visitorSide = this.options.terminate === undefined ? stream : this.decrypted(stream, socket, log);
      visitorSide.pipe(socket);
      socket.pipe(visitorSide);
    });
    const idleMs = this.options.idleTimeoutMs ?? DEFAULT_TCP_IDLE_TIMEOUT_MS;
    if (idleMs > 0) {
      // Node's socket timeout counts activity both ways on the local socket, which every byte crosses.
      socket.setTimeout(idleMs, () => {
        log.outcome = 'idle';
        stream.reset(ResetCode.IDLE_TIMEOUT);
        socket.destroy();
      });
    }
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (!connected) {
        log.outcome = 'refused';
        log.detail = error.code ?? error.message;
        stream.reset(ResetCode.UPSTREAM_UNREACHABLE);
      } else {
        if (log.outcome === 'closed') log.outcome = 'reset';
        stream.reset(ResetCode.UPSTREAM_ERROR);
      }
    });
    // The visitor (or the edge) cut the connection: the local one is cut too.
    stream.on('close', () => {
      if (!stream.readableEnded || !stream.writableFinished) {
        if (log.outcome === 'closed' && connected) log.outcome = 'reset';
        socket.destroy();
      }
    });
    // Judged when the local side ends, not when the whole connection closes: the visitor may keep
    // its own side open for a while after the service hung up.
    const judgeHeader = (): void => {
      if (proxyHeaderAt > 0 && log.bytesOut === 0 && performance.now() - proxyHeaderAt < PROXY_HINT_MS) {
        log.detail = `the local service closed right after the PROXY protocol header; it may not speak PROXY protocol (${this.options.proxyProtocol})`;
      }
      proxyHeaderAt = 0;
    };
    socket.once('end', judgeHeader);
    socket.on('close', () => {
      this.sockets.delete(socket);
      log.durationMs = performance.now() - started;
      judgeHeader();
      this.onLog(log);
    });
  }

  /** The visitor's side as plain bytes: TLS over the stream, served with the agent's own certificate. */
  private decrypted(stream: Duplex, socket: Socket, log: TcpConnectionLog): Duplex {
    const secure = new TLSSocket(stream, { isServer: true, secureContext: this.options.terminate! });
    secure.on('error', (error: NodeJS.ErrnoException) => {
      // A failed handshake (a visitor that does not trust the certificate, a scanner): both sides close.
      if (log.outcome === 'closed') log.outcome = 'reset';
      log.detail ??= `TLS: ${error.code ?? error.message}`;
      socket.destroy();
      stream.destroy();
    });
    return secure;
  }

  /** Closes every local connection (the tunnel ends). */
  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return Promise.resolve();
  }
}
