import net, { type Socket } from 'node:net';
import tls from 'node:tls';
import { IdTable } from '@svcrouter/protocol';
import { ResponseParser } from './h1-response-parser.js';
import type { LocalTarget } from './local-target.js';

/**
 * How long a connection may sit idle in the pool. Below Node's default server keepAliveTimeout
 * (5 s), so we close first and rarely race an origin that is closing the same socket.
 */
export const IDLE_TIMEOUT_MS = 4000;
/** How long a new connection may take to open before the request fails as unreachable. */
export const CONNECT_TIMEOUT_MS = 10_000;

/** Where the pool connects. */
export interface OriginAddress {
  host: string;
  port: number;
  tls: boolean;
}

/** The origin address of a local target. */
export function originAddress(target: LocalTarget): OriginAddress {
  const url = new URL(target.origin);
  // URL keeps an IPv6 literal in brackets; net.connect wants it bare.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const tlsOn = url.protocol === 'https:';
  return { host, port: Number(url.port) || (tlsOn ? 443 : 80), tls: tlsOn };
}

/**
 * Receives a connection's socket events while it serves one request. Events of an idle
 * connection are the pool's; each connection has one set of listeners for its whole life.
 */
export interface ConnectionUser {
  onOriginData(chunk: Buffer): void;
  /** The origin closed its side (FIN). 'close' follows. */
  onOriginEnd(): void;
  /** The socket failed (error set) or closed. */
  onOriginClose(error: Error | undefined): void;
  /** The socket can take more request body. */
  onOriginDrain(): void;
}

/** One keep-alive connection to the origin, with its response parser. */
export class OriginConnection {
  /** The request being served; undefined while idle or once discarded. */
  user: ConnectionUser | undefined;
  /** Responses completed on this connection; above 0 it may have gone stale while idle. */
  served = 0;
  /** performance.now() when it went idle. */
  idleSince = 0;
  idle = false;
  /** Its key in the pool's table of open connections. */
  poolId = 0;
  readonly parser = new ResponseParser();

  constructor(
    readonly socket: Socket,
    private readonly pool: OriginPool,
  ) {
    socket.on('data', (chunk: Buffer) => {
      if (this.user) this.user.onOriginData(chunk);
      else this.pool.discard(this); // nothing is owed on an idle connection: garbage
    });
    socket.on('end', () => {
      if (this.user) this.user.onOriginEnd();
      else this.pool.discard(this);
    });
    socket.on('drain', () => this.user?.onOriginDrain());
    socket.on('error', (error) => this.closed(error));
    socket.on('close', () => this.closed(undefined));
  }

  private closed(error: Error | undefined): void {
    const user = this.user;
    this.user = undefined;
    this.pool.forget(this);
    user?.onOriginClose(error);
  }
}

/**
 * Keep-alive connections to one origin. No limit on concurrent connections (each request in
 * flight holds one); idle ones are reused newest first (LIFO: the warmest socket, and the old
 * ones age out), unref'd so they never keep the process alive, and closed after
 * IDLE_TIMEOUT_MS by a single timer for the whole pool rather than one per socket.
 */
export class OriginPool {
  private readonly idle: OriginConnection[] = [];
  /** Not a Set: an origin that closes after each response churns it per request (see IdTable). */
  private readonly open = new IdTable<OriginConnection>();
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly address: OriginAddress) {}

  /** Number of open connections, busy or idle. */
  get size(): number {
    return this.open.size;
  }

  /** Number of idle connections. */
  get idleCount(): number {
    return this.idle.length;
  }

  /** The newest idle connection, or a new one; `user` receives its events from now on. */
  acquire(user: ConnectionUser): OriginConnection {
    let connection = this.idle.pop();
    // Destroyed but its 'close' not yet emitted: skip it rather than fail the request on it.
    while (connection !== undefined && connection.socket.destroyed) {
      this.forget(connection);
      connection = this.idle.pop();
    }
    if (connection === undefined) return this.connect(user);
    connection.idle = false;
    connection.user = user;
    connection.socket.ref();
    return connection;
  }

  /** A new connection (writes made while it is still opening are queued by the socket). */
  connect(user: ConnectionUser): OriginConnection {
    const { host, port } = this.address;
    const socket = this.address.tls
      ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host, rejectUnauthorized: false })
      : net.connect({ host, port });
    socket.setNoDelay(true);
    socket.setTimeout(CONNECT_TIMEOUT_MS, () => socket.destroy(connectTimeoutError()));
    socket.once(this.address.tls ? 'secureConnect' : 'connect', () => socket.setTimeout(0));
    const connection = new OriginConnection(socket, this);
    connection.user = user;
    connection.poolId = this.open.add(connection);
    if (this.closed) socket.destroy();
    return connection;
  }

  /**
   * Takes back a connection whose response completed cleanly and which may carry another
   * request. The caller has made sure of that: the parser says keep-alive, nothing followed
   * the response, and the request body went out whole.
   */
  release(connection: OriginConnection): void {
    connection.user = undefined;
    connection.served++;
    if (this.closed || connection.socket.destroyed) return this.discard(connection);
    // A response can complete while its last chunk had the socket paused for backpressure.
    if (connection.socket.isPaused()) connection.socket.resume();
    connection.socket.unref();
    connection.idle = true;
    connection.idleSince = performance.now();
    this.idle.push(connection);
    this.idleTimer ??= setTimeout(() => this.closeExpired(), IDLE_TIMEOUT_MS).unref();
  }

  /** Closes a connection that must not be reused. */
  discard(connection: OriginConnection): void {
    connection.user = undefined;
    connection.parser.detach();
    this.forget(connection);
    connection.socket.destroy();
  }

  /** Destroys every connection, busy or idle; requests still on them fail. */
  close(): void {
    this.closed = true;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    for (const connection of this.open.snapshot()) connection.socket.destroy();
    this.idle.length = 0;
  }

  /** @internal The connection closed or was discarded: drop it from the lists. */
  forget(connection: OriginConnection): void {
    this.open.delete(connection.poolId);
    if (!connection.idle) return;
    connection.idle = false;
    const index = this.idle.indexOf(connection);
    if (index >= 0) this.idle.splice(index, 1);
  }

  /**
   * Closes connections idle for IDLE_TIMEOUT_MS. The list is ordered by idleSince (pushed
   * in time order, taken from the top), so the expired ones are at the bottom.
   */
  private closeExpired(): void {
    this.idleTimer = undefined;
    const now = performance.now();
    while (this.idle.length > 0 && now - this.idle[0]!.idleSince >= IDLE_TIMEOUT_MS - 1) {
      this.discard(this.idle[0]!);
    }
    const oldest = this.idle[0];
    if (oldest !== undefined) {
      this.idleTimer = setTimeout(() => this.closeExpired(), oldest.idleSince + IDLE_TIMEOUT_MS - now).unref();
    }
  }
}

function connectTimeoutError(): Error {
  return Object.assign(new Error(`connect timed out after ${CONNECT_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' });
}
