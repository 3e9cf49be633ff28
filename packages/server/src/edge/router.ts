import type { Binding } from './edge-session.js';

// Binding is declared beside EdgeSession (each holds the other), so the two modules import one way.
export type { Binding };

/** Hears this node's bindings come and go (cluster/ records them in the shared route table). */
export interface RouterWatcher {
  added(binding: Binding): void;
  removed(binding: Binding): void;
}

/**
 * Routing table of this edge node: hostname → live binding (for a pool, one member, whose
 * `pool` lists them all), in memory, so the request path
 * never touches the store. Hostnames are stored normalised (lower-case, no port).
 */
export class Router {
  private readonly byHost = new Map<string, Binding>();
  private readonly byTunnel = new Map<string, Binding>();
  private watcher: RouterWatcher | undefined;
  /** Hostnames routed to a TLS passthrough binding: the HTTPS listener reads SNI only while there are some. */
  private tlsHosts = 0;

  private added = 0;

  /** Sets the one watcher of binding changes (several edge nodes); without it the router tells nobody. */
  watch(watcher: RouterWatcher): void {
    this.watcher = watcher;
  }

  /** The binding serving `host`, or undefined when no agent is bound. */
  resolve(host: string): Binding | undefined {
    return this.byHost.get(host);
  }

  /** The live binding of a tunnel id. */
  byTunnelId(tunnelId: string): Binding | undefined {
    return this.byTunnel.get(tunnelId);
  }

  /** Hostnames of this node routed to TLS passthrough tunnels. */
  get tlsCount(): number {
    return this.tlsHosts;
  }

  /** Bindings added since the router was made: a number that changes with every bind. */
  get additions(): number {
    return this.added;
  }

  /** Adds or replaces the binding for its hostname; a pool member joins its pool (the first one routes the name). */
  add(binding: Binding): void {
    this.added++;
    if (binding.pool !== undefined) {
      binding.pool.members.push(binding);
      if (!this.byHost.has(binding.hostname)) this.route(binding.hostname, binding);
      this.byTunnel.set(binding.tunnelId, binding);
      this.watcher?.added(binding);
      return;
    }
    const previous = this.byHost.get(binding.hostname);
    if (previous) this.byTunnel.delete(previous.tunnelId);
    this.route(binding.hostname, binding);
    this.byTunnel.set(binding.tunnelId, binding);
    this.watcher?.added(binding);
  }

  /** Removes exactly this binding; a newer binding for the same hostname is left alone. */
  remove(binding: Binding): boolean {
    const pool = binding.pool;
    if (pool !== undefined) {
      const index = pool.members.indexOf(binding);
      if (index < 0) return false;
      pool.members.splice(index, 1);
      if (pool.next > index) pool.next--;
      if (this.byTunnel.get(binding.tunnelId) === binding) this.byTunnel.delete(binding.tunnelId);
      const head = pool.members[0];
      if (this.byHost.get(binding.hostname) === binding) {
        this.route(binding.hostname, head);
      }
      this.watcher?.removed(binding);
      // The name's route now names another member of this node.
      if (head !== undefined) this.watcher?.added(head);
      return true;
    }
    if (this.byHost.get(binding.hostname) !== binding) return false;
    this.route(binding.hostname, undefined);
    if (this.byTunnel.get(binding.tunnelId) === binding) this.byTunnel.delete(binding.tunnelId);
    this.watcher?.removed(binding);
    return true;
  }

  /** Number of live bindings (each pool member counts). */
  get size(): number {
    return this.byTunnel.size;
  }

  /** Every live binding of this node, each pool member included. */
  bindings(): IterableIterator<Binding> {
    return this.byTunnel.values();
  }

  /** Live bindings of one account. */
  countForAccount(accountId: string): number {
    let count = 0;
    for (const binding of this.byTunnel.values()) if (binding.accountId === accountId) count++;
    return count;
  }

  /** Points `host` at `binding` (undefined: nowhere), keeping the count of TLS hostnames. */
  private route(host: string, binding: Binding | undefined): void {
    if (this.byHost.get(host)?.proto === 'tls') this.tlsHosts--;
    if (binding === undefined) this.byHost.delete(host);
    else {
      this.byHost.set(host, binding);
      if (binding.proto === 'tls') this.tlsHosts++;
    }
  }
}
