/**
 * How many agent sessions this node accepts, in all and per account (SVC_MAX_SESSIONS,
 * SVC_MAX_ACCOUNT_SESSIONS), so a flood of sessions (a runaway script, a leaked token) cannot
 * take a node down. A session is counted from the moment its token checks out, before the
 * 101 goes out, so concurrent upgrades cannot all slip under the limit together.
 */
export interface SessionLimitsConfig {
  /** Most sessions on this node; Infinity: no limit. */
  perNode: number;
  /** Most sessions of one account on this node; Infinity: no limit. */
  perAccount: number;
}

/** Why a session was refused. */
export type SessionRefusal = 'node' | 'account';

export class SessionLimits {
  private total = 0;
  private readonly byAccount = new Map<string, number>();
  /** Sessions refused since start, by reason (for /metrics). */
  readonly refused = { node: 0, account: 0 };

  constructor(readonly config: SessionLimitsConfig) {}

  /** Counts a new session of `accountId`, or says which limit refuses it (nothing counted then). */
  admit(accountId: string): SessionRefusal | undefined {
    if (this.total >= this.config.perNode) {
      this.refused.node++;
      return 'node';
    }
    const held = this.byAccount.get(accountId) ?? 0;
    if (held >= this.config.perAccount) {
      this.refused.account++;
      return 'account';
    }
    this.total++;
    this.byAccount.set(accountId, held + 1);
    return undefined;
  }

  /** A session admitted for `accountId` ended (or never started). */
  release(accountId: string): void {
    const held = this.byAccount.get(accountId) ?? 0;
    if (held === 0) return;
    this.total--;
    if (held === 1) this.byAccount.delete(accountId);
    else this.byAccount.set(accountId, held - 1);
  }

  /** Sessions counted now. */
  get count(): number {
    return this.total;
  }
}
