import type { Logger } from 'pino';
import { portOfTcpHostname } from './tcp-address.js';

export interface RemotePortsDeps {
  /** This node's SVC_TCP_PORTS: a port outside it is not listened on here. */
  range: { from: number; to: number };
  sharedDomain: string;
  log: Logger;
  /** Listens on `port` (once, shared with this node's own binds); false when the system refuses it. */
  listen(port: number): Promise<boolean>;
  /** `port` is no longer wanted for a tunnel elsewhere: stop listening unless a bind here holds it. */
  release(port: number): void;
}

/**
 * The ports of TCP tunnels whose agents other nodes hold. Every node of a cluster listens on
 * them too, so a visitor may use any node's address; the connection then travels over the peer
 * link to the holder (tcp-tunnels.ts asks the cluster for that binding). The set is replaced
 * whole from the cluster's route cache each time it changes, so a missed change heals at the
 * next reload. A port this node cannot listen on (another program holds it) is logged once and
 * tried again at each reload; nothing else fails.
 */
export class RemotePorts {
  private readonly ports = new Set<number>();
  /** Ports already logged as refused or out of range: logged once, not at every reload. */
  private readonly logged = new Set<number>();
  private closed = false;

  constructor(private readonly deps: RemotePortsDeps) {}

  /** Whether a tunnel held on another node wants `port`. */
  has(port: number): boolean {
    return this.ports.has(port);
  }

  /** The hostnames other nodes hold now (all of them): listens on the TCP tunnels' ports among them, and lets go of the rest. */
  follow(hostnames: Iterable<string>): void {
    if (this.closed) return;
    const { sharedDomain, range, log } = this.deps;
    const wanted = new Set<number>();
    for (const hostname of hostnames) {
      const port = portOfTcpHostname(sharedDomain, hostname);
      if (port === undefined) continue;
      if (port >= range.from && port <= range.to) wanted.add(port);
      else this.logOnce(port, () => log.warn({ port, range }, 'a TCP tunnel on another node holds a port outside SVC_TCP_PORTS here'));
    }
    for (const port of [...this.ports]) {
      if (wanted.has(port)) continue;
      this.ports.delete(port);
      this.logged.delete(port);
      this.deps.release(port);
    }
    for (const port of wanted) {
      this.ports.add(port);
      this.open(port);
    }
  }

  /** Forgets every port (shutdown: the listeners are closed with the rest). */
  close(): void {
    this.closed = true;
    this.ports.clear();
  }

  private open(port: number): void {
    const { log } = this.deps;
    void this.deps.listen(port).then((listening) => {
      if (!listening) {
        this.logOnce(port, () =>
          log.warn({ port }, 'cannot listen on the port of a TCP tunnel held on another node; visitors must use that node'),
        );
        return;
      }
      if (this.logged.delete(port)) log.info({ port }, 'listening on the port of a TCP tunnel held on another node');
      // The tunnel went offline while the listener was opening.
      if (!this.ports.has(port)) this.deps.release(port);
    });
  }

  private logOnce(port: number, write: () => void): void {
    if (this.logged.has(port)) return;
    this.logged.add(port);
    write();
  }
}
