import type { Logger } from 'pino';
import { ErrorCode, Messages, type ErrorCodeValue } from '@svcrouter/protocol';
import { PLANS, type Plan, type PlanLimits, type Store, type Tunnel } from '../store/index.js';

// An account's plan lowered below its live tunnel count (`svc-server account plan`, run in a
// process of its own against the same store): the newest tunnels beyond the new limit are ended
// on whichever node holds them, the oldest within it are left alone. A node hears of a change
// from the cluster's notification at once, or finds it by reading the plans of the accounts it
// serves: every POLL_MS those with more tunnels here than some plan allows, and every SWEEP_MS
// all of them with their online counts on every node (a notification lost, a node restarted).
// A tunnel whose agent's connection was lost (its name in its grace period, visitors held for a
// reconnect) is still one of the account's tunnels, counted by when it came online, so a blip at
// the moment a plan is lowered does not change which tunnels survive: beyond the limit, its grace
// ends at once (held visitors get the offline page, the name and port are free). A bind on this
// node counts it too (Binder), so its slot is not taken meanwhile. Only the node that holds a
// grace knows it; the others count the tunnels online in the store.

/** How often the plans of accounts with more live tunnels here than the smallest plan allows are read. */
export const POLL_MS = 2_000;
/** How often the plans and online counts of every account with a live tunnel here are read. */
export const SWEEP_MS = 60_000;

/** An online tunnel as the choice needs it: when it came online (its row's last change). */
export type OnlineTunnel = Pick<Tunnel, 'id' | 'updatedAt'>;

/** A tunnel of this node whose agent is away (its name in its grace period). */
export interface AwayTunnel {
  readonly accountId: string;
  readonly tunnelId: string;
  /** When it was bound (Date.now()): its row says when it went offline, not when it came online. */
  readonly boundAt?: number;
}

/**
 * The tunnels to end when `limit` is below the number online: the newest beyond the limit. The
 * oldest `limit` stay; ties go by id, so every node of a cluster picks the same ones.
 */
export function tunnelsBeyondLimit(online: readonly OnlineTunnel[], limit: number): string[] {
  const keep = Math.max(0, limit);
  if (online.length <= keep) return [];
  const oldestFirst = [...online].sort((a, b) => a.updatedAt - b.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return oldestFirst.slice(keep).map((tunnel) => tunnel.id);
}

/** What an agent whose tunnel was ended prints (after the refusal a bind over the limit gets). */
export function planLoweredMessage(plan: Plan, limit: number): string {
  return `${Messages.TUNNEL_LIMIT}: the account's plan was lowered to ${plan}, which allows ${limit} tunnel${limit === 1 ? '' : 's'}, and this was one of its newest`;
}

export interface PlanWatchDeps {
  store: Pick<Store, 'accounts' | 'tunnels'>;
  limitsFor(plan: Plan): PlanLimits;
  /** This node's live bindings (each pool member counts): which accounts it serves, and how many tunnels each. */
  bindings(): Iterable<{ readonly accountId: string }>;
  /** This node's tunnels whose agents are away (names in their grace period); absent: none. */
  awayTunnels?(): Iterable<AwayTunnel>;
  /** Ends a tunnel of this node (live, or away in its grace), its agent told why; false when this node does not hold it. */
  endTunnel(tunnelId: string, code: ErrorCodeValue, message: string): boolean;
  log: Logger;
  /** Clock for the sweep, ms. Default Date.now. */
  now?: () => number;
  /** How often the poll runs, ms. Default POLL_MS. */
  pollMs?: number;
  /** How often a poll is a sweep, ms. Default SWEEP_MS. */
  sweepMs?: number;
}

/**
 * Ends the tunnels beyond an account's plan once it is lowered. Long-lived state (the plans last
 * seen, a timer), hence a class. Costs nothing per request; per POLL_MS, a count of this node's
 * bindings and, only when some account has more than the smallest plan allows, one query.
 */
export class PlanWatch {
  /** The plan last read for each account served here: a change means its tunnels are counted again. */
  private readonly seen = new Map<string, Plan>();
  /** Accounts being checked, so a notification and a poll do not end tunnels twice. */
  private readonly checking = new Set<string>();
  private readonly smallestLimit: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  /** The poll running now, if any. */
  private polling: Promise<void> | undefined;
  private lastSweep: number;

  constructor(private readonly deps: PlanWatchDeps) {
    this.smallestLimit = Math.min(...PLANS.map((plan) => deps.limitsFor(plan).tunnels));
    this.now = deps.now ?? Date.now;
    this.lastSweep = this.now();
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.poll(), this.deps.pollMs ?? POLL_MS);
    this.timer.unref();
  }

  /** Stops polling; resolves once a poll under way has finished (the store may be closed then). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.polling;
  }

  /** An account's plan changed (the cluster's notification): ends its tunnels here beyond the new limit now. */
  async planChanged(accountId: string): Promise<void> {
    if (this.countHere().get(accountId) === undefined) return;
    const plan = (await this.deps.store.accounts.plansOf([accountId])).get(accountId);
    if (plan !== undefined) await this.check(accountId, plan, true);
  }

  /** One round: reads the plans of the accounts that may be over, and checks those over or changed. */
  poll(): Promise<void> {
    this.polling ??= this.pollNow().finally(() => (this.polling = undefined));
    return this.polling;
  }

  private async pollNow(): Promise<void> {
    try {
      const counts = this.countHere();
      for (const accountId of this.seen.keys()) if (!counts.has(accountId)) this.seen.delete(accountId);
      const sweep = this.now() - this.lastSweep >= (this.deps.sweepMs ?? SWEEP_MS);
      if (sweep) this.lastSweep = this.now();
      const due = [...counts].filter(([, count]) => sweep || count > this.smallestLimit).map(([accountId]) => accountId);
      if (due.length === 0) return;
      const plans = await this.deps.store.accounts.plansOf(due);
      // A sweep counts every node's tunnels too: an account may be over with few of them here.
      const everywhere = sweep ? await this.deps.store.tunnels.countOnlineOf(due) : undefined;
      for (const [accountId, plan] of plans) {
        const limit = this.deps.limitsFor(plan).tunnels;
        const before = this.seen.get(accountId);
        const changed = before !== undefined && before !== plan;
        const over = counts.get(accountId)! > limit || (everywhere?.get(accountId) ?? 0) > limit;
        if (changed || over) await this.check(accountId, plan, changed);
        else this.seen.set(accountId, plan);
      }
    } catch (error) {
      this.deps.log.warn({ err: error }, 'could not read the plans of the accounts served here; trying again');
    }
  }

  /** Ends this node's tunnels of the account beyond the plan's limit, counting every node's from the store. */
  private async check(accountId: string, plan: Plan, changed: boolean): Promise<void> {
    if (this.checking.has(accountId)) return;
    this.checking.add(accountId);
    try {
      const limit = this.deps.limitsFor(plan).tunnels;
      const online = this.withAway(accountId, await this.deps.store.tunnels.listForAccount(accountId));
      this.seen.set(accountId, plan);
      const beyond = tunnelsBeyondLimit(online, limit);
      if (beyond.length === 0) return;
      const message = planLoweredMessage(plan, limit);
      const ended = beyond.filter((tunnelId) => this.deps.endTunnel(tunnelId, ErrorCode.TUNNEL_LIMIT, message));
      if (ended.length > 0 || changed) {
        this.deps.log.info({ accountId, plan, limit, online: online.length, ended }, "tunnels beyond the account's plan ended");
      }
    } finally {
      this.checking.delete(accountId);
    }
  }

  /** Live tunnels per account on this node, and those whose agents are away. */
  private countHere(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const binding of this.deps.bindings()) counts.set(binding.accountId, (counts.get(binding.accountId) ?? 0) + 1);
    for (const lost of this.deps.awayTunnels?.() ?? []) counts.set(lost.accountId, (counts.get(lost.accountId) ?? 0) + 1);
    return counts;
  }

  /** The account's tunnels online in the store, and this node's away ones (offline rows there), by when each came online. */
  private withAway(accountId: string, rows: readonly Tunnel[]): OnlineTunnel[] {
    const online: OnlineTunnel[] = rows.filter((tunnel) => tunnel.status === 'online');
    const listed = new Set(online.map((tunnel) => tunnel.id));
    const byId = new Map(rows.map((tunnel) => [tunnel.id, tunnel]));
    for (const away of this.deps.awayTunnels?.() ?? []) {
      if (away.accountId !== accountId || listed.has(away.tunnelId)) continue;
      // A row deleted meanwhile is no tunnel of the account any more.
      const row = byId.get(away.tunnelId);
      if (row) online.push({ id: away.tunnelId, updatedAt: away.boundAt ?? row.updatedAt });
    }
    return online;
  }
}
