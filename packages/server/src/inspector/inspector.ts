import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { isStoreUnavailable, type NewRequestRecord, type Store } from '../store/index.js';
import { RequestHub } from './request-hub.js';

/** A request as the edge saw it; the owner may be unknown (a pinned name whose agent is offline). */
export interface CapturedRequest extends Omit<NewRequestRecord, 'accountId' | 'tunnelId'> {
  accountId?: string | undefined;
  tunnelId?: string | undefined;
}

/** Who holds a hostname: the account, and the tunnel row when there is one. */
export interface HostOwner {
  accountId: string;
  tunnelId: string | undefined;
}

export interface InspectorOptions {
  store: Store;
  log: Logger;
  /** Records per store transaction; a queue this long is written at once. Default 256. */
  batchSize?: number;
  /** How often queued records are written. Default 20 ms. */
  flushIntervalMs?: number;
  /** Queue bound; captures beyond it are dropped and counted. Default 10,000. */
  maxQueue?: number;
  retention?: {
    /** Default 3 days. */
    maxAgeMs?: number;
    /** Default 100,000. */
    maxPerAccount?: number;
  };
  /** How often retention runs. Default 60 s. */
  pruneIntervalMs?: number;
  /** Clock, ms since the epoch. Default Date.now. */
  now?: () => number;
  /** Owner of a hostname without a live binding. Default: the tunnel row of that hostname. */
  ownerOf?: (host: string) => Promise<HostOwner | undefined>;
}

export interface InspectorStats {
  /** Records waiting to be written. */
  queueDepth: number;
  /** Records lost: captured while the queue was full, in a batch the store refused, or still queued when stop() gave up. */
  dropped: number;
  /** Records written to the store. */
  written: number;
  /** Live stream subscriptions (GET /v1/requests/stream). */
  streamSubscribers: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * Write cadence. With 500 records every 250 ms, the queued records outlived two young-generation
 * collections, so V8 copied and then promoted every one of them (GC time ×4.6 with the inspector
 * on), and when rows were still inserted on the event loop (~9 µs each) a busy edge paused
 * ~25 ms four times a second (small-GET p99 8 -> 50 ms). Small batches written often let records
 * die young, and keep the store's share of any one loop turn small on engines that write in
 * the calling thread (SQLite writes now run on a worker thread; see store/).
 */
const DEFAULT_BATCH_SIZE = 256;
const DEFAULT_FLUSH_INTERVAL_MS = 20;
/** Pauses between the final write's attempts while the store is unavailable: 100 ms doubling to 1 s. */
const FINAL_RETRY_FIRST_MS = 100;
const FINAL_RETRY_MAX_MS = 1000;
/** How long a hostname's owner (or its absence) is remembered. */
const OWNER_TTL_MS = 30_000;
/** Hostnames remembered at most; the oldest entry goes first. */
const OWNER_CACHE_MAX = 10_000;

/**
 * The Traffic Inspector's write path. `capture` only pushes onto a bounded in-memory queue,
 * so the request path never waits for the store. A background loop writes the queue in
 * batches, ONE transaction per batch, in capture order; another loop applies retention.
 * Records without an owner are resolved inside the loop (hostname → tunnel row, cached);
 * records for hostnames nobody holds are not kept. Each committed batch goes to `live`, the
 * feed of GET /v1/requests/stream.
 */
export class Inspector {
  /** Records as they are stored, for live subscribers. */
  readonly live: RequestHub;
  private queue: CapturedRequest[] = [];
  private dropped = 0;
  private written = 0;
  private writing: Promise<void> | undefined;
  private failing = false;
  private timers: NodeJS.Timeout[] = [];
  private readonly owners = new Map<string, { owner: HostOwner | undefined; at: number }>();
  private readonly now: () => number;
  private readonly batchSize: number;
  private readonly maxQueue: number;

  constructor(private readonly opts: InspectorOptions) {
    this.now = opts.now ?? Date.now;
    this.batchSize = opts.batchSize ?? DEFAULT_BATCH_SIZE;
    this.maxQueue = opts.maxQueue ?? 10_000;
    this.live = new RequestHub(opts.log);
  }

  /** Queues one record. Never blocks or throws; when the queue is full the record is dropped. */
  capture(record: CapturedRequest): void {
    if (this.queue.length >= this.maxQueue) {
      this.dropped++;
      return;
    }
    this.queue.push(record);
    // A full batch is written in the check phase, not here: capture runs inside a visitor's
    // 'finish', and that visitor should not wait for SQLite.
    if (this.queue.length === this.batchSize && this.timers.length > 0) setImmediate(this.kickBound);
  }

  /** Queue depth and lifetime counters. */
  stats(): InspectorStats {
    return { queueDepth: this.queue.length, dropped: this.dropped, written: this.written, streamSubscribers: this.live.subscriberCount };
  }

  /** Starts the write and retention loops. */
  start(): void {
    if (this.timers.length > 0) return;
    const write = setInterval(() => void this.kick(), this.opts.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS);
    const prune = setInterval(() => {
      void this.prune().catch((error: unknown) => this.opts.log.error({ err: error }, 'inspector retention failed'));
    }, this.opts.pruneIntervalMs ?? 60_000);
    this.timers = [write, prune];
    for (const timer of this.timers) timer.unref();
  }

  /** Writes everything queued so far (and anything captured meanwhile). */
  async flush(): Promise<void> {
    // One write after the one in flight, not a loop until the queue is empty: a batch that meets
    // an unavailable store goes back to the queue for the timer's next write, and a loop here
    // would retry it without pause (and never return at shutdown while the store is down).
    while (this.writing) await this.writing;
    if (this.queue.length > 0) await this.kick();
  }

  /** Deletes records past the age limit or beyond each account's cap. Returns how many. */
  prune(): Promise<number> {
    const retention = this.opts.retention ?? {};
    return this.opts.store.requests.prune({
      olderThanMs: this.now() - (retention.maxAgeMs ?? 3 * DAY_MS),
      maxPerAccount: retention.maxPerAccount ?? 100_000,
    });
  }

  /**
   * Stops the loops and writes what is queued. While the store is unavailable the write is
   * retried for up to `retryForMs` (0: one attempt); what is still queued then is dropped,
   * counted in `dropped` and logged, so a shutdown during a store outage says what it lost.
   */
  async stop({ retryForMs = 0 }: { retryForMs?: number } = {}): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    const deadline = performance.now() + retryForMs;
    for (let attempt = 0; ; attempt++) {
      await this.flush();
      if (this.queue.length === 0) return;
      const pause = Math.min(FINAL_RETRY_MAX_MS, FINAL_RETRY_FIRST_MS * 2 ** attempt);
      if (performance.now() + pause > deadline) break;
      await delay(pause);
    }
    const lost = this.queue.length;
    this.queue = [];
    this.dropped += lost;
    this.opts.log.error({ count: lost, retriedForMs: retryForMs }, 'inspector records dropped at shutdown: the store stayed unavailable');
  }

  private readonly kickBound = (): void => void this.kick();

  /** Starts a write unless one is in flight; either way, returns the write in flight. */
  private kick(): Promise<void> {
    this.writing ??= this.writeAll().finally(() => (this.writing = undefined));
    return this.writing;
  }

  private async writeAll(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.length <= this.batchSize ? this.queue.splice(0) : this.queue.splice(0, this.batchSize);
      try {
        const records = await this.withOwners(batch);
        if (records.length > 0) this.live.publish(records, await this.opts.store.requests.insertBatch(records));
        this.written += records.length;
        if (this.failing) this.opts.log.info('inspector writes recovered');
        this.failing = false;
      } catch (error) {
        if (isStoreUnavailable(error)) {
          // A locked, full or restarting store passes: the batch goes back to the front of the
          // queue for the next tick, as far as the queue bound allows; what does not fit is counted.
          const kept = batch.slice(0, Math.max(0, this.maxQueue - this.queue.length));
          this.queue.unshift(...kept);
          this.dropped += batch.length - kept.length;
          if (!this.failing)
            this.opts.log.warn({ err: error, count: batch.length }, 'inspector store unavailable; batch kept for the next write');
          this.failing = true;
          return;
        }
        this.dropped += batch.length;
        if (!this.failing) this.opts.log.error({ err: error, count: batch.length }, 'inspector batch dropped: store write failed');
        this.failing = true;
      }
      // Better-sqlite3 is synchronous: without a macrotask between batches, a backlog would be
      // written in one long pause while visitors wait.
      if (this.queue.length > 0) await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private async withOwners(batch: CapturedRequest[]): Promise<NewRequestRecord[]> {
    const records: NewRequestRecord[] = [];
    for (const r of batch) {
      // Most records know their owner: passed on as they are, with no copy per record.
      if (r.accountId !== undefined) records.push(r as NewRequestRecord);
      else {
        const owner = await this.ownerOf(r.host);
        if (owner) records.push({ ...r, accountId: owner.accountId, tunnelId: owner.tunnelId });
      }
    }
    return records;
  }

  private async ownerOf(host: string): Promise<HostOwner | undefined> {
    const cached = this.owners.get(host);
    if (cached && this.now() - cached.at < OWNER_TTL_MS) return cached.owner;
    const owner = this.opts.ownerOf
      ? await this.opts.ownerOf(host)
      : await this.opts.store.tunnels.byHostname(host).then((t) => t && { accountId: t.accountId, tunnelId: t.id });
    this.owners.delete(host);
    if (this.owners.size >= OWNER_CACHE_MAX) this.owners.delete(this.owners.keys().next().value!);
    this.owners.set(host, { owner, at: this.now() });
    return owner;
  }
}
