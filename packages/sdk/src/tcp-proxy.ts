import net, { type Socket } from 'node:net';
import { TLSSocket, type SecureContext } from 'node:tls';
import {
  IdTable,
  ResetCode,
  SocketPipe,
  TCP_CONNECTED_HEAD,
  TCP_CONNECTED_TEXT,
  isTcpHead,
  streamDuplex,
  type CallbackStream,
  type RequestHead,
} from '@svcrouter/protocol';
import { proxyProtocolHeader, type ProxyProtocolVersion } from './proxy-protocol.js';
import { TargetLookup } from './target-lookup.js';

/** Default `--idle-timeout`: a TCP connection with no byte either way for this long is closed. */
export const DEFAULT_TCP_IDLE_TIMEOUT_MS = 3_600_000;
/**
 * The longest idle timeout: the longest delay a Node timer keeps. A longer one fires at once
 * (with a TimeoutOverflowWarning), which would close every connection as it opens.
 */
export const MAX_TCP_IDLE_TIMEOUT_MS = 2_147_483_647;
/** Why an idle timeout longer than MAX_TCP_IDLE_TIMEOUT_MS is refused; `given`: the value as the user wrote it, when the sentence names it. */
export function idleTimeoutTooLong(given?: string): string {
  const what = given === undefined ? 'too long' : `${given} is too long`;
  return `${what}: at most ${MAX_TCP_IDLE_TIMEOUT_MS}ms (about 24 days), the longest timer Node keeps; 0 never closes an idle connection`;
}
/** A local service that closes within this long after a PROXY header likely does not speak PROXY protocol. */
const PROXY_HINT_MS = 1000;
/** Keepalive probes on local connections start after this much silence, so a dead service host is noticed. */
const LOCAL_KEEPALIVE_MS = 60_000;

/**
 * Whether a local host is this machine (`localhost`, 127.0.0.0/8, ::1). Keepalive on a connection
 * to it can notice nothing: a service that dies is answered for by this machine's kernel at once
 * (a reset or a FIN), and a machine that dies takes the agent with it. It would cost each
 * connection four `setsockopt` calls.
 */
export function isLoopbackHost(host: string): boolean {
  const lower = host.toLowerCase();
  if (lower === 'localhost') return true;
  const kind = net.isIP(lower);
  if (kind === 4) return lower.startsWith('127.');
  if (kind === 6) return lower === '::1' || lower === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(lower);
  return false;
}

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
  /** Not a Set: a connection each adds and removes one (see IdTable). */
  private readonly sockets = new IdTable<Socket>();
  /** The local host's addresses, looked up once for the connections that follow (target-lookup.ts). */
  private readonly targetLookup = new TargetLookup();
  /** Keepalive only where it can notice something: a local service on another machine. */
  private readonly keepAlive: boolean;

  constructor(
    readonly target: TcpTarget,
    private readonly onLog: (log: TcpConnectionLog) => void,
    private readonly options: TcpProxyOptions = {},
  ) {
    this.keepAlive = !isLoopbackHost(target.host);
  }

  /** Serves one visitor connection. Never throws; failures reset the stream. */
  handle(callbacks: CallbackStream): void {
    const head = callbacks.meta as RequestHead;
    if (!isTcpHead(head)) {
      // An HTTP request on a TCP tunnel: the edge routes by port, so it is a bug, not a visitor's.
      callbacks.reset(ResetCode.UPSTREAM_ERROR);
      return;
    }
    const started = performance.now();
    const visitor = typeof head.a === 'string' ? head.a : '';
    const log: TcpConnectionLog = { visitor, durationMs: 0, bytesIn: 0, bytesOut: 0, outcome: 'closed' };
    // No-delay and keepalive are set as the connection comes up, without a call of ours each.
    const socket = net.connect({
      host: this.target.host,
      port: this.target.port,
      allowHalfOpen: true,
      noDelay: true,
      keepAlive: this.keepAlive,
      keepAliveInitialDelay: LOCAL_KEEPALIVE_MS,
      lookup: this.targetLookup.lookup,
    });
    const id = this.sockets.add(socket);
    let connected = false;
    // The visitor cut the connection (or the edge did): the local one is cut too.
    const onCut = (): void => {
      if (log.outcome === 'closed' && connected) log.outcome = 'reset';
    };
    const side =
      this.options.terminate === undefined ? plainSide(callbacks, socket, log, onCut) : this.decryptedSide(callbacks, socket, log, onCut);
    let proxyHeaderAt = 0;
    socket.once('connect', () => {
      connected = true;
      const version = this.options.proxyProtocol;
      if (version) {
        socket.write(proxyProtocolHeader(version, visitor || undefined, typeof head.o === 'number' ? head.o : 0));
        proxyHeaderAt = performance.now();
      }
      callbacks.sendHeaders(TCP_CONNECTED_HEAD, false, TCP_CONNECTED_TEXT);
      side.start();
    });
    const idleMs = this.options.idleTimeoutMs ?? DEFAULT_TCP_IDLE_TIMEOUT_MS;
    if (idleMs > 0) {
      // Node's socket timeout counts activity both ways on the local socket, which every byte crosses.
      socket.setTimeout(idleMs, () => {
        log.outcome = 'idle';
        side.reset(ResetCode.IDLE_TIMEOUT);
        socket.destroy();
      });
    }
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (!connected) {
        // The service may have moved to another address: the next connection looks again.
        this.targetLookup.forget();
        log.outcome = 'refused';
        log.detail = error.code ?? error.message;
        side.reset(ResetCode.UPSTREAM_UNREACHABLE);
      } else {
        if (log.outcome === 'closed') log.outcome = 'reset';
        side.reset(ResetCode.UPSTREAM_ERROR);
      }
    });
    // Judged when the local side ends, not when the whole connection closes: the visitor may keep
    // its own side open for a while after the service hung up. Without PROXY protocol there is
    // nothing to judge, and no listener to add per connection.
    const judgeHeader = (): void => {
      if (proxyHeaderAt > 0 && log.bytesOut === 0 && performance.now() - proxyHeaderAt < PROXY_HINT_MS) {
        log.detail = `the local service closed right after the PROXY protocol header; it may not speak PROXY protocol (${this.options.proxyProtocol})`;
      }
      proxyHeaderAt = 0;
    };
    if (this.options.proxyProtocol) socket.once('end', judgeHeader);
    socket.on('close', () => {
      this.sockets.delete(id);
      log.durationMs = performance.now() - started;
      if (proxyHeaderAt > 0) judgeHeader();
      this.onLog(log);
    });
  }

  /**
   * The visitor's side as plain bytes: TLS over the stream, served with the agent's own
   * certificate. TLSSocket needs a Duplex underneath, so this side keeps one.
   */
  private decryptedSide(callbacks: CallbackStream, socket: Socket, log: TcpConnectionLog, onCut: () => void): VisitorSide {
    const stream = streamDuplex(callbacks);
    // The visitor's end was read: either the stream's end, or the TLS layer's own (a close_notify
    // or the end under it), after which TLSSocket destroys the stream without reading further.
    let visitorEnded = false;
    stream.on('error', () => undefined);
    stream.on('close', () => {
      if (!(stream.readableEnded || visitorEnded) || !stream.writableFinished) {
        onCut();
        socket.destroy();
      }
    });
    return {
      start: () => {
        const secure = new TLSSocket(stream, { isServer: true, secureContext: this.options.terminate! });
        // Both counts are of plain bytes, what the local service took and gave, as on a plain tunnel.
        secure.on('data', (chunk: Buffer) => (log.bytesIn += chunk.length));
        socket.on('data', (chunk: Buffer) => (log.bytesOut += chunk.length));
        secure.once('end', () => (visitorEnded = true));
        secure.on('error', (error: NodeJS.ErrnoException) => {
          // A failed handshake (a visitor that does not trust the certificate, a scanner): both sides close.
          if (log.outcome === 'closed') log.outcome = 'reset';
          log.detail ??= `TLS: ${error.code ?? error.message}`;
          socket.destroy();
          stream.destroy();
        });
        secure.pipe(socket);
        socket.pipe(secure);
      },
      reset: (code) => stream.reset(code),
    };
  }

  /** Closes every local connection (the tunnel ends). */
  close(): Promise<void> {
    for (const socket of this.sockets.snapshot()) socket.destroy();
    return Promise.resolve();
  }
}

/** The visitor's end of one connection, as the local socket sees it. */
interface VisitorSide {
  /** Sends nothing itself: starts moving bytes between the visitor and the connected local socket. */
  start(): void;
  /** Aborts the visitor's stream with `code` (the local socket is the caller's). */
  reset(code: string): void;
}

/**
 * The visitor's side as the raw stream, driven by callbacks (SocketPipe): bytes both ways with
 * the stream's flow control; a reset from the edge destroys the local socket.
 */
function plainSide(callbacks: CallbackStream, socket: Socket, log: TcpConnectionLog, onCut: () => void): VisitorSide {
  const pipe = new SocketPipe(socket, callbacks, {
    fromStream(chunk) {
      log.bytesIn += chunk.length;
      return true;
    },
    fromSocket(chunk) {
      log.bytesOut += chunk.length;
      return true;
    },
    onReset: onCut,
  });
  return { start: () => pipe.start(), reset: (code) => callbacks.reset(code) };
}
