import type { Binding } from './edge-session.js';

// Binding is declared beside EdgeSession (each holds the other), so the two modules import one way.
export type { Binding };

/** Hears this node's bindings come and go (cluster/ records them in the shared route table). */
export interface RouterWatcher {
  added(binding: Binding): void;
  removed(binding: Binding): void;
}

/**
 * Routing table of this edge node: hostname → live binding, in memory, so the request path
 * never touches the store. Hostnames are stored normalised (lower-case, no port).
 */
export class Router {
  private readonly byHost = new Map<string, Binding>();
  private readonly byTunnel = new Map<string, Binding>();
  private watcher: RouterWatcher | undefined;

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

  /** Bindings added since the router was made: a number that changes with every bind. */
  get additions(): number {
    return this.added;
  }

  /** Adds or replaces the binding for its hostname. */
  add(binding: Binding): void {
    this.added++;
    const previous = this.byHost.get(binding.hostname);
    if (previous) this.byTunnel.delete(previous.tunnelId);
    this.byHost.set(binding.hostname, binding);
    this.byTunnel.set(binding.tunnelId, binding);
    this.watcher?.added(binding);
  }

  /** Removes exactly this binding; a newer binding for the same hostname is left alone. */
  remove(binding: Binding): boolean {
    if (this.byHost.get(binding.hostname) !== binding) return false;
    this.byHost.delete(binding.hostname);
    if (this.byTunnel.get(binding.tunnelId) === binding) this.byTunnel.delete(binding.tunnelId);
    this.watcher?.removed(binding);
    return true;
  }

  /** Number of live bindings. */
  get size(): number {
    return this.byHost.size;
  }

  /** Every live binding of this node. */
  bindings(): IterableIterator<Binding> {
    return this.byHost.values();
  }

  /** Live bindings of one account. */
  countForAccount(accountId: string): number {
    let count = 0;
    for (const binding of this.byHost.values()) if (binding.accountId === accountId) count++;
    return count;
  }
}
