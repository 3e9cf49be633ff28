/**
 * Liveness checks for sessions that only listen: the edge keeps thousands of quiet agent
 * sessions, and a timer per session (plus a PING of its own per interval) was most of what an
 * idle session cost it. Here one interval per timeout value checks every watched session, and
 * a session pays only a flag it sets when bytes arrive.
 *
 * Precision: a sweep runs every `timeoutMs / SWEEPS_PER_TIMEOUT`. A session is taken to have
 * been heard at the sweep that finds its flag set, up to one period after the bytes came, so it
 * is declared dead once a period short of the timeout has passed since that sweep: between
 * `timeoutMs - 1 period` and `timeoutMs` after the peer's last bytes, never later.
 */

/** What the sweeper checks: a session that records whether its peer spoke since the last look. */
export interface LivenessWatched {
  /** Called by the sweep: returns whether the peer spoke since the last call, and clears it. */
  takeHeard(): boolean;
  /** Called once, when the peer has been silent for the timeout. */
  onSilent(silentMs: number): void;
}

/** Sweeps per timeout: the fraction of the timeout a death can be noticed early. */
const SWEEPS_PER_TIMEOUT = 8;

interface Entry {
  lastHeardAt: number;
}

/** The sessions sharing one timeout, and the one timer that checks them. */
class Sweep {
  readonly watched = new Map<LivenessWatched, Entry>();
  private readonly timer: NodeJS.Timeout;
  private readonly periodMs: number;

  constructor(private readonly timeoutMs: number) {
    this.periodMs = Math.max(1, Math.floor(timeoutMs / SWEEPS_PER_TIMEOUT));
    this.timer = setInterval(() => this.run(), this.periodMs);
    this.timer.unref();
  }

  private run(): void {
    const now = performance.now();
    const limit = this.timeoutMs - this.periodMs;
    for (const [session, entry] of this.watched) {
      if (session.takeHeard()) entry.lastHeardAt = now;
      else if (now - entry.lastHeardAt >= limit) {
        this.watched.delete(session);
        session.onSilent(Math.round(now - entry.lastHeardAt + this.periodMs));
      }
    }
    if (this.watched.size === 0) this.stop();
  }

  stop(): void {
    clearInterval(this.timer);
    sweeps.delete(this.timeoutMs);
  }
}

/** Timeouts in use, each with its sweep. */
const sweeps = new Map<number, Sweep>();

/** Starts checking `session`: onSilent once nothing was heard from its peer for about `timeoutMs`. */
export function watchLiveness(session: LivenessWatched, timeoutMs: number): void {
  unwatchLiveness(session);
  let sweep = sweeps.get(timeoutMs);
  if (!sweep) {
    sweep = new Sweep(timeoutMs);
    sweeps.set(timeoutMs, sweep);
  }
  session.takeHeard();
  sweep.watched.set(session, { lastHeardAt: performance.now() });
}

/** Stops checking `session` (it closed); stops a sweep left with nothing to check. */
export function unwatchLiveness(session: LivenessWatched): void {
  for (const sweep of sweeps.values()) {
    if (sweep.watched.delete(session) && sweep.watched.size === 0) sweep.stop();
  }
}

/** Sessions being checked, across every timeout (for metrics and tests). */
export function watchedSessionCount(): number {
  let count = 0;
  for (const sweep of sweeps.values()) count += sweep.watched.size;
  return count;
}
