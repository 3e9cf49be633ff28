import http2, { type ClientHttp2Session } from 'node:http2';
import net from 'node:net';
import { CONNECT_TIMEOUT_MS, IDLE_TIMEOUT_MS, type OriginAddress } from './origin-pool.js';

/**
 * The one HTTP/2 connection to an origin reached with `proto: 'h2'`. HTTP/2 multiplexes, so
 * every request in flight shares it, as gRPC clients and reverse proxies do (Envoy, nginx's
 * grpc_pass). A connection that fails, closes or announces GOAWAY is dropped and the next
 * request opens a new one; streams already on a GOAWAY'd connection finish there. It closes
 * after IDLE_TIMEOUT_MS without a stream, and never keeps the process alive.
 */
export class H2OriginPool {
  private current: ClientHttp2Session | undefined;
  private closed = false;

  constructor(private readonly address: OriginAddress) {}

  /** Whether a connection is open (or opening). */
  get connected(): boolean {
    return this.current !== undefined;
  }

  /** The open connection, or a new one. Its failures reach the requests made on it. */
  session(): ClientHttp2Session {
    const live = this.current;
    if (live !== undefined && !live.closed && !live.destroyed) return live;
    const { host, port, tls } = this.address;
    const authority = `${tls ? 'https' : 'http'}://${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
    const session = http2.connect(authority, {
      rejectUnauthorized: false,
      ALPNProtocols: ['h2'],
      ...(tls && !net.isIP(host) ? { servername: host } : {}),
    });
    this.current = session;
    const drop = (): void => {
      if (this.current === session) this.current = undefined;
    };
    // Errors reach the streams as their own 'error'; the session's is only for dropping it.
    session.on('error', drop);
    session.on('close', drop);
    session.on('goaway', drop);
    session.setTimeout(IDLE_TIMEOUT_MS, () => {
      drop();
      session.close();
    });
    const connectTimer = setTimeout(() => session.destroy(connectTimeoutError()), CONNECT_TIMEOUT_MS).unref();
    session.once('connect', () => clearTimeout(connectTimer));
    session.once('close', () => clearTimeout(connectTimer));
    session.unref();
    if (this.closed) session.destroy();
    return session;
  }

  /** Closes the connection; requests still in flight on it fail. */
  close(): void {
    this.closed = true;
    const session = this.current;
    this.current = undefined;
    session?.destroy();
  }
}

function connectTimeoutError(): Error {
  return Object.assign(new Error(`connect timed out after ${CONNECT_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' });
}
