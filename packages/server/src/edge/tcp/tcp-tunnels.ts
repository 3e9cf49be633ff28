import { randomInt } from 'node:crypto';
import net, { type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { BindMessages, ErrorCode, IdTable, Messages, SvcError, type AgentMessage } from '@svcrouter/protocol';
import type { Store, TcpClaim } from '../../store/index.js';
import { pickMember } from '../pool.js';
import type { Binding, Router } from '../router.js';
import { pipeTcpVisitor, type TcpPipeDeps } from './tcp-pipe.js';
import { parseRemoteAddr, portOfTcpHostname, tcpHostname } from './tcp-address.js';
import { RemotePorts } from './tcp-remote-ports.js';
import { inheritVisitorSocketOptions, setVisitorSocketOptions } from './visitor-socket-options.js';

/** Ports tried in turn for one bind when the one picked cannot be listened on (another program holds it). */
const LISTEN_ATTEMPTS = 8;

type BindRequest = Extract<AgentMessage, { type: 'bind' }>;

export interface TcpTunnelsDeps extends TcpPipeDeps {
  store: Store;
  router: Router;
  /** The inclusive port range TCP tunnels get ports from (SVC_TCP_PORTS). */
  range: { from: number; to: number };
  /** Interface the ports listen on (SVC_BIND_HOST). */
  host: string;
  sharedDomain: string;
  nodeId: string;
  /** How long a port stays its account's after the agent's connection was lost (SVC_NAME_GRACE_MS). */
  graceMs: number;
  log: Logger;
  /** Several nodes: the binding that carries a visitor of `hostname` to the node holding its agent (cluster/). */
  remoteBinding?(hostname: string): Binding | undefined;
}

/** One port this node listens on for a bound TCP tunnel, and the visitor connections it carries. */
interface PortListener {
  server: Server;
  /** The router's name of this port, made once: every visitor connection is routed by it. */
  hostname: string;
  /** Not a Set: a connection each adds and removes one (see IdTable). */
  sockets: IdTable<Socket>;
  /** Its accepted sockets inherit no-delay and keepalive from it (visitor-socket-options.ts). */
  inherits: boolean;
}

/**
 * The edge's TCP tunnels: picks a port for each bind (random and free, or the one a reconnect or
 * `--remote-addr` asks for), records it in the store under its primary key, and listens on it
 * while the tunnel is bound. Visitors are routed by port through the router (tcp-address.ts).
 *
 * Ordering: every store write of one port (claim, hold after a lost connection, drop after a
 * clean exit) runs in a chain per port, in the order the edge decided them, so a late "hold"
 * of a lost session never lands after the reconnect's claim.
 */
export class TcpTunnels {
  private readonly listeners = new Map<number, PortListener>();
  /** Listens in progress, so a port asked for twice at once (a bind here, a tunnel elsewhere) gets one listener. */
  private readonly opening = new Map<number, Promise<boolean>>();
  /** Ports this node listens on for its own binds (claimed, bound, or about to be). */
  private readonly local = new Set<number>();
  /** Ports of tunnels held on other nodes (tcp-remote-ports.ts). */
  readonly remote: RemotePorts;
  private readonly chains = new Map<number, Promise<unknown>>();
  /** Leases this node held when it last stopped are kept for their accounts first (a restart). */
  private readonly ready: Promise<unknown>;

  constructor(private readonly deps: TcpTunnelsDeps) {
    this.remote = new RemotePorts({
      range: deps.range,
      sharedDomain: deps.sharedDomain,
      log: deps.log,
      listen: (port) => this.listen(port),
      // Connections already relayed end with their streams (the holder resets them when the
      // tunnel goes): a route cache that missed a beat must not cut them.
      release: (port) => this.release(port, false),
    });
    this.ready = deps.store.tcpAddresses
      .holdNodeLeases(deps.nodeId, Date.now() + deps.graceMs)
      .catch((error: unknown) => deps.log.error({ err: error }, 'could not hold the TCP ports of the last run'));
  }

  /** The public name and pinning of a TCP bind, its port claimed in the store and listened on. Throws SvcError for the agent. */
  async choose(accountId: string, request: BindRequest): Promise<{ hostname: string; pinned: boolean }> {
    await this.ready;
    const { sharedDomain } = this.deps;
    // Not ignored: a bind that asked for an address must not get a random port instead.
    if (request.remoteAddr !== undefined && request.remoteAddr !== null && typeof request.remoteAddr !== 'string') {
      throw new SvcError(ErrorCode.NAME_INVALID, BindMessages.tcpAddressInvalid(JSON.stringify(request.remoteAddr)));
    }
    // A reconnect of a --remote-addr tunnel sends both: the address decides, as at its first bind.
    if (typeof request.remoteAddr === 'string' && request.remoteAddr !== '') {
      const shown = request.remoteAddr;
      const addr = parseRemoteAddr(shown);
      if (addr === undefined) throw new SvcError(ErrorCode.NAME_INVALID, BindMessages.tcpAddressInvalid(shown));
      if (addr.host !== undefined && addr.host.toLowerCase() !== sharedDomain.toLowerCase()) {
        throw new SvcError(ErrorCode.NAME_INVALID, BindMessages.tcpAddressOtherHost(shown, sharedDomain));
      }
      this.checkRange(addr.port);
      // Only the account's reservation, or its own lease still held (a tunnel of its own, or one
      // reconnecting): any free port would pass the plan's limit of reserved addresses.
      await this.claim(accountId, addr.port, shown, (store, port, now) => store.claimAddress(port, accountId, this.deps.nodeId, now));
      return { hostname: tcpHostname(sharedDomain, addr.port), pinned: true };
    }
    const previous = typeof request.hostname === 'string' ? portOfTcpHostname(sharedDomain, request.hostname) : undefined;
    if (previous !== undefined) {
      // A reconnect: the same port back, as long as no other account took it once its grace ran out.
      this.checkRange(previous);
      const shown = `${sharedDomain}:${previous}`;
      await this.claim(accountId, previous, shown, (store, port, now) => store.claimOwn(port, accountId, this.deps.nodeId, now));
      return { hostname: tcpHostname(sharedDomain, previous), pinned: false };
    }
    return { hostname: tcpHostname(sharedDomain, await this.claimRandom(accountId)), pinned: false };
  }

  /**
   * A bind whose port was claimed failed later (limit, session gone): the port is given up. Its
   * lease goes whatever the bind asked for, or the port would stay taken with no tunnel on it; a
   * reservation stays, as dropLease never deletes one.
   */
  failed(hostname: string, accountId: string): void {
    const port = portOfTcpHostname(this.deps.sharedDomain, hostname);
    if (port === undefined || this.deps.router.resolve(hostname)) return;
    this.local.delete(port);
    this.release(port);
    this.write(port, () => this.deps.store.tcpAddresses.dropLease(port, accountId));
  }

  /** A TCP binding left the router: its port stops listening and its connections close; the lease is dropped or held. */
  unbound(binding: Binding, clean: boolean): void {
    const port = portOfTcpHostname(this.deps.sharedDomain, binding.hostname);
    if (port === undefined) return;
    // A newer binding of the same port (a takeover) keeps the listener.
    if (this.deps.router.resolve(binding.hostname)) return;
    this.local.delete(port);
    this.release(port);
    const { store } = this.deps;
    if (clean) this.write(port, () => store.tcpAddresses.dropLease(port, binding.accountId));
    else this.write(port, () => store.tcpAddresses.holdLease(port, binding.accountId, Date.now() + this.deps.graceMs));
  }

  /** Whether `hostname` names a TCP tunnel of this edge. */
  isTcp(hostname: string): boolean {
    return portOfTcpHostname(this.deps.sharedDomain, hostname) !== undefined;
  }

  /** Stops every listener and cuts their connections (shutdown); leases stay for the next run. */
  async close(): Promise<void> {
    this.remote.close();
    const closing = [...this.listeners.keys()].map((port) => this.stopListening(port));
    await Promise.all(closing);
    await this.written();
  }

  /** Resolves once every store write queued so far has run, failed ones included (they are logged). */
  async written(): Promise<void> {
    await Promise.all([...this.chains.values()].map((p) => p.catch(() => undefined)));
  }

  /**
   * Refuses a port outside SVC_TCP_PORTS before anything is written for it: a claim written
   * first would keep the port from every other account with no tunnel on it. A reservation or
   * lease from before the range changed lands here too.
   */
  private checkRange(port: number): void {
    const { from, to } = this.deps.range;
    if (port < from || port > to) throw new SvcError(ErrorCode.TCP_PORT_UNAVAILABLE, BindMessages.tcpPortOutsideRange(port, from, to));
  }

  /** Claims a port a bind named (`how`: which rows it may take) and listens on it; throws SvcError for the agent. */
  private async claim(
    accountId: string,
    port: number,
    shown: string,
    how: (repo: Store['tcpAddresses'], port: number, now: number) => Promise<TcpClaim>,
  ): Promise<void> {
    const { store } = this.deps;
    const claim = await this.queue(port, () => how(store.tcpAddresses, port, Date.now()));
    if (claim === 'not-yours') throw new SvcError(ErrorCode.NAME_TAKEN, BindMessages.tcpAddressNotYours(shown));
    if (claim === 'taken') throw new SvcError(ErrorCode.NAME_TAKEN, BindMessages.tcpAddressTaken(shown));
    if (!(await this.listen(port))) {
      // Another program holds the port here: the lease just written goes (a reservation stays).
      this.write(port, () => store.tcpAddresses.dropLease(port, accountId));
      throw new SvcError(ErrorCode.TCP_PORT_UNAVAILABLE, Messages.TCP_PORT_UNAVAILABLE);
    }
    this.local.add(port);
  }

  private async claimRandom(accountId: string): Promise<number> {
    const { store, range, nodeId } = this.deps;
    for (let attempt = 0; attempt < LISTEN_ATTEMPTS; attempt++) {
      const taken = await store.tcpAddresses.takenPorts(range.from, range.to, Date.now());
      const free: number[] = [];
      for (let port = range.from; port <= range.to; port++) if (!taken.has(port) && !this.listeners.has(port)) free.push(port);
      if (free.length === 0) break;
      const port = free[randomInt(free.length)]!;
      // Another node (or bind) may win the port between the read and the claim: pick again.
      if (!(await this.queue(port, () => store.tcpAddresses.claimFree(port, accountId, nodeId, Date.now())))) continue;
      if (await this.listen(port)) {
        this.local.add(port);
        return port;
      }
      this.write(port, () => store.tcpAddresses.dropLease(port, accountId));
    }
    throw new SvcError(ErrorCode.TCP_PORT_UNAVAILABLE, Messages.TCP_PORT_UNAVAILABLE);
  }

  /** Listens on `port` (once); false when the system refuses it (another program holds it). */
  private listen(port: number): Promise<boolean> {
    if (this.listeners.has(port)) return Promise.resolve(true);
    const pending = this.opening.get(port);
    if (pending !== undefined) return pending;
    const opened = this.open(port).finally(() => this.opening.delete(port));
    this.opening.set(port, opened);
    return opened;
  }

  private open(port: number): Promise<boolean> {
    const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: false }, (socket) => this.accept(port, listener, socket));
    const listener: PortListener = { server, hostname: tcpHostname(this.deps.sharedDomain, port), sockets: new IdTable(), inherits: false };
    // A relay's listen backlog matters under bursts of connections (see TOOLCHAIN.md).
    server.maxConnections = 10_000;
    return new Promise((resolve) => {
      server.once('error', () => resolve(false));
      server.listen({ port, host: this.deps.host, backlog: 511 }, () => {
        // Before any connection reaches `accept` (this runs before the loop polls again). One the
        // kernel took in the moment between listen(2) and these options goes without them; for a
        // bind of this node it finds no binding yet (the bind completes later) and is closed.
        listener.inherits = inheritVisitorSocketOptions(server);
        server.on('error', (error) => this.deps.log.warn({ err: error, port }, 'tcp listener failed'));
        this.listeners.set(port, listener);
        resolve(true);
      });
    });
  }

  private accept(port: number, { hostname, sockets, inherits }: PortListener, socket: Socket): void {
    let binding = this.deps.router.resolve(hostname);
    // A pool: each connection goes to the member with the fewest open, and counts there until it closes.
    if (binding?.pool !== undefined) binding = pickMember(binding.pool);
    // Held on another node: the connection goes there over the peer link, as an HTTP request would.
    binding ??= this.deps.remoteBinding?.(hostname);
    if (!binding || binding.session.isClosed) {
      socket.destroy();
      return;
    }
    if (!inherits) setVisitorSocketOptions(socket);
    pipeTcpVisitor(socket, binding, port, this.deps, sockets);
  }

  /** Stops listening on `port` unless a bind here or a tunnel elsewhere still wants it; `cut`: its connections close too. */
  private release(port: number, cut = true): void {
    if (this.local.has(port) || this.remote.has(port)) return;
    void this.stopListening(port, cut);
  }

  private stopListening(port: number, cut = true): Promise<void> {
    const listener = this.listeners.get(port);
    if (!listener) return Promise.resolve();
    this.listeners.delete(port);
    if (cut) for (const socket of listener.sockets.snapshot()) socket.destroy();
    return new Promise((resolve) => listener.server.close(() => resolve()));
  }

  /** Runs a store write of `port` after the ones before it; failures are logged, not thrown. */
  private write(port: number, task: () => Promise<unknown>): void {
    void this.queue(port, task).catch((error: unknown) => this.deps.log.error({ err: error, port }, 'could not record the TCP port'));
  }

  private queue<T>(port: number, task: () => Promise<T>): Promise<T> {
    const previous = this.chains.get(port) ?? Promise.resolve();
    const next = previous.then(task, task);
    const tail = next.catch(() => undefined);
    this.chains.set(port, tail);
    void tail.then(() => {
      if (this.chains.get(port) === tail) this.chains.delete(port);
    });
    return next;
  }
}
