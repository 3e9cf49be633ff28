import type { SecureContext } from 'node:tls';

/** Default cap on cached hostnames: about 10,000 contexts of a few KiB each. */
export const MAX_CACHED_CERTIFICATES = 10_000;
/** A cached certificate is replaced this long before it expires, so no client sees one about to lapse. */
export const REFRESH_BEFORE_EXPIRY_MS = 7 * 24 * 60 * 60 * 1000;

/** What a loader hands the cache: a ready TLS context and when its certificate expires. */
export interface CachedCertificate {
  context: SecureContext;
  notAfter: Date;
}

/** Tunables of a CertificateCache; tests inject a clock. */
export interface CertificateCacheOptions {
  /** Most hostnames held at once; default MAX_CACHED_CERTIFICATES. */
  maxEntries?: number;
  /** Clock in epoch milliseconds; default Date.now. */
  now?: () => number;
}

/** A loader's result, or undefined when the hostname gets no certificate. */
export type CertificateLoader = () => Promise<CachedCertificate | undefined>;

interface Flight {
  promise: Promise<SecureContext | undefined>;
}

interface Entry {
  context: SecureContext;
  refreshAt: number;
}

/**
 * In-memory map hostname → TLS context, shared by every handshake of one edge node.
 *
 * Guarantees:
 * - Single flight: while a load for a hostname is in progress, every other lookup of
 *   that hostname awaits the same promise, so a burst of first handshakes mints once.
 * - Bounded: at most `maxEntries` hostnames; the least recently used is dropped first,
 *   so random SNI names cannot grow memory without bound.
 * - Failures are not cached: a rejected or empty load leaves no entry, and the next
 *   lookup tries again.
 */
export class CertificateCache {
  readonly #entries = new Map<string, Entry>();
  readonly #loading = new Map<string, Flight>();
  readonly #maxEntries: number;
  readonly #now: () => number;

  /** Creates an empty cache. */
  constructor(options: CertificateCacheOptions = {}) {
    this.#maxEntries = Math.max(1, options.maxEntries ?? MAX_CACHED_CERTIFICATES);
    this.#now = options.now ?? Date.now;
  }

  /** Number of hostnames currently cached (loads in flight not counted). */
  get size(): number {
    return this.#entries.size;
  }

  /** The cached context for `hostname` if it is still fresh; never loads. */
  peek(hostname: string): SecureContext | undefined {
    const entry = this.#entries.get(hostname);
    if (entry === undefined) return undefined;
    if (this.#now() >= entry.refreshAt) {
      this.#entries.delete(hostname);
      return undefined;
    }
    // Re-insert so Map order stays least-recently-used first.
    this.#entries.delete(hostname);
    this.#entries.set(hostname, entry);
    return entry.context;
  }

  /** The cached context for `hostname`, or the result of `load`, run once for all concurrent callers. */
  get(hostname: string, load: CertificateLoader): Promise<SecureContext | undefined> {
    const cached = this.peek(hostname);
    if (cached !== undefined) return Promise.resolve(cached);
    const pending = this.#loading.get(hostname);
    if (pending !== undefined) return pending.promise;
    // Registered before load() starts, so even a loader that settles at once finds its
    // own flight in the map and removes it.
    const flight: Flight = { promise: Promise.resolve(undefined) };
    this.#loading.set(hostname, flight);
    flight.promise = this.#load(hostname, load, flight);
    return flight.promise;
  }

  /** Forgets `hostname`, e.g. when its domain is removed; a load in flight then completes without being stored. */
  delete(hostname: string): void {
    this.#entries.delete(hostname);
    this.#loading.delete(hostname);
  }

  async #load(hostname: string, load: CertificateLoader, flight: Flight): Promise<SecureContext | undefined> {
    try {
      const result = await load();
      if (result === undefined) return undefined;
      // Stored only if still current: delete() may have dropped this flight meanwhile.
      if (this.#loading.get(hostname) === flight) this.#store(hostname, result);
      return result.context;
    } finally {
      if (this.#loading.get(hostname) === flight) this.#loading.delete(hostname);
    }
  }

  #store(hostname: string, cert: CachedCertificate): void {
    const now = this.#now();
    const expiresAt = cert.notAfter.getTime();
    // Refresh ahead of expiry, but keep any certificate for at least half its remaining
    // life: one that arrives already close to expiry would otherwise reload on every handshake.
    const margin = Math.min(REFRESH_BEFORE_EXPIRY_MS, Math.max(0, expiresAt - now) / 2);
    this.#entries.delete(hostname);
    this.#entries.set(hostname, { context: cert.context, refreshAt: expiresAt - margin });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done === true) break;
      this.#entries.delete(oldest.value);
    }
  }
}
