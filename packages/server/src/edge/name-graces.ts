import type { Binding } from './router.js';

/** A name whose agent's connection was lost: only its account may bind it until `until` (Date.now()). */
export interface NameGrace {
  accountId: string;
  until: number;
  /** The tunnel whose agent was lost: deleting it ends the grace. */
  tunnelId: string;
  /** The key its agent signed in with: revoking it ends the grace, as nothing can bind the name back with it. */
  keyId: string | undefined;
  /** The binding that was lost, reported offline when the grace ends. */
  binding: Binding;
  /** Its row stayed online: the same agent is still served through another node (counted there). */
  elsewhere?: boolean;
}

/**
 * The names of this node in their grace period, by hostname (see Binder): a Map, with the counts
 * a bind and plan-watch.ts take of them. A grace past its `until` counts for nothing, even before
 * its timer has removed it.
 */
export class NameGraces extends Map<string, NameGrace> {
  /**
   * Slots the account's away tunnels hold against its tunnel limit: those whose rows went offline
   * (the store no longer counts them), other than `hostname`'s own (binding it is their return).
   */
  awaySlots(accountId: string, hostname: string): number {
    let away = 0;
    const now = Date.now();
    for (const [name, grace] of this) {
      if (grace.accountId === accountId && name !== hostname && !grace.elsewhere && grace.until > now) away++;
    }
    return away;
  }

  /** The lost bindings whose graces run now. */
  lostBindings(): Binding[] {
    const now = Date.now();
    return [...this.values()].filter((grace) => grace.until > now).map((grace) => grace.binding);
  }
}
