import type { Logger } from 'pino';
import type { OidcSessionsRepo } from '../store/index.js';

/** How often a node reads the sessions signed out since its last look: the delay before every node refuses one. */
export const REVOCATION_POLL_MS = 500;
/**
 * How long a node admits signed-in visitors without having read the revocations: past this since
 * its last good read, it answers 503 to every signed-in request rather than admit a session that
 * may have been signed out meanwhile. The bound on how late a sign-out takes effect while the
 * store is out.
 */
export const REVOCATIONS_STALE_MS = 30_000;
/**
 * Each poll reads again the rows of this window before its last one: a row written by a node whose
 * clock is behind, or committed late, is still seen. The set makes reading one twice free.
 */
const OVERLAP_MS = 60_000;
/** Every so often the whole list is read again, which also forgets expired sessions from memory. */
const FULL_RELOAD_MS = 10 * 60_000;

export interface RevocationsOptions {
  repo: OidcSessionsRepo;
  log: Logger;
  pollMs?: number;
  staleMs?: number;
  now?: () => number;
}

/**
 * The sessions signed out before their time, as a Set in memory: the request path asks `has` and
 * `current`, never the store. A sign-out on this node is in the set at once; one on another node
 * arrives with the next poll, within about REVOCATION_POLL_MS.
 */
export class Revocations {
  private revoked = new Set<string>();
  private lastRead = -Infinity;
  private lastFull = -Infinity;
  /** The newest revokedAt read so far: the next poll starts OVERLAP_MS before it. */
  private newest = 0;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  /** Sign-outs of this node while a full read runs (it may not see them). */
  private localDuringFull: Set<string> | undefined;
  private readonly now: () => number;
  private readonly staleMs: number;

  constructor(private readonly options: RevocationsOptions) {
    this.now = options.now ?? Date.now;
    this.staleMs = options.staleMs ?? REVOCATIONS_STALE_MS;
  }

  /** Reads the whole list once (the node does not admit anyone before), then polls. */
  async start(): Promise<void> {
    await this.poll();
    this.timer = setInterval(() => void this.tick(), this.options.pollMs ?? REVOCATION_POLL_MS);
    this.timer.unref();
  }

  /** Whether a session was signed out. */
  has(sessionId: string): boolean {
    return this.revoked.has(sessionId);
  }

  /** Whether the list was read recently enough to trust (see REVOCATIONS_STALE_MS). */
  current(now: number): boolean {
    return now - this.lastRead <= this.staleMs;
  }

  /** Seconds the list has gone unread, for the 503 page. */
  staleSeconds(now: number): number {
    return Math.round((now - this.lastRead) / 1000);
  }

  /** Signs a session out everywhere: stored first (rejects when the store is out), then refused here at once. */
  async revoke(sessionId: string, expiresAt: number): Promise<void> {
    await this.options.repo.revokeSession({ sessionId, revokedAt: this.now(), expiresAt });
    this.revoked.add(sessionId);
    this.localDuringFull?.add(sessionId);
  }

  /** One read: everything (first, and every FULL_RELOAD_MS) or what is new since the last. */
  async poll(): Promise<void> {
    const startedAt = this.now();
    const full = startedAt - this.lastFull >= FULL_RELOAD_MS;
    if (full) this.localDuringFull = new Set();
    const rows = await this.options.repo.revokedSince(full ? 0 : Math.max(0, this.newest - OVERLAP_MS), startedAt);
    if (full) {
      // The whole list replaces the set, which drops expired sessions; a sign-out of this node
      // stored after the read began is kept.
      const next = new Set(rows.map((row) => row.sessionId));
      for (const id of this.localDuringFull ?? []) next.add(id);
      this.revoked = next;
      this.localDuringFull = undefined;
      this.lastFull = startedAt;
    } else {
      for (const row of rows) this.revoked.add(row.sessionId);
    }
    for (const row of rows) if (row.revokedAt > this.newest) this.newest = row.revokedAt;
    this.lastRead = startedAt;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async tick(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      await this.poll();
    } catch (err) {
      this.options.log.warn({ err, staleSeconds: this.staleSeconds(this.now()) }, 'reading signed-out sessions failed');
    } finally {
      this.polling = false;
    }
  }
}
