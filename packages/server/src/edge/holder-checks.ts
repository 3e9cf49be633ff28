import { BindMessages, ErrorCode, SvcError, hasAccessRules, type TunnelPolicy } from '@svcrouter/protocol';
import type { BindingSession } from './edge-session.js';
import type { Binding } from './router.js';

/** What the holder checks need of a bind. */
export interface IncomingBind {
  accountId: string;
  session: BindingSession;
  /** `--pool`: the bind joins the name's pool instead of taking the name over. */
  pooled: boolean;
  /** The agent process the bind comes from (its sessions on several nodes share it). */
  group: string | undefined;
  /** The bind's rules; undefined: none. */
  policy: TunnelPolicy | undefined;
  /** policySignature of a pooled bind's rules ('' otherwise). */
  signature: string;
}

/**
 * Throws the refusal of a bind for `hostname` while `holder` serves it on this node, before
 * anything is written: another account's name, a pool joined without --pool (or the reverse),
 * a second tunnel of the same agent or process, rules that a takeover would drop, a pool member
 * whose rules differ from its pool's.
 */
export function checkHolder(holder: Binding, hostname: string, bind: IncomingBind): void {
  if (holder.accountId !== bind.accountId) throw nameTaken(hostname);
  if ((holder.pool !== undefined) !== bind.pooled) {
    throw new SvcError(ErrorCode.NAME_TAKEN, BindMessages.poolMismatch(hostname, !bind.pooled));
  }
  if (!bind.pooled) {
    // Two tunnels of one agent on one name: the second would replace the first, which still says it forwards.
    if (holder.session === bind.session) throw new SvcError(ErrorCode.NAME_TAKEN, BindMessages.sameAgent(hostname));
    // One agent's two sessions on one node would replace each other: the second is refused.
    if (bind.group !== undefined && holder.group === bind.group) throw new SvcError(ErrorCode.NAME_TAKEN, BindMessages.sameNode(hostname));
  }
  // A tunnel with rules is never replaced by a bind without them (on other nodes, the store
  // says so), nor a tunnel with access rules by a bind that brings only traffic rules.
  if ((holder.access !== undefined || holder.traffic !== undefined) && bind.policy === undefined) {
    throw new SvcError(ErrorCode.POLICY_INVALID, BindMessages.policyRequired(hostname));
  }
  if (!bind.pooled && holder.access !== undefined && !hasAccessRules(bind.policy)) {
    throw new SvcError(ErrorCode.POLICY_INVALID, BindMessages.policyRequired(hostname));
  }
  if (holder.pool !== undefined && holder.pool.members.length > 0 && holder.pool.signature !== bind.signature) {
    throw new SvcError(ErrorCode.POLICY_INVALID, BindMessages.poolPolicyMismatch(hostname));
  }
}

export function nameTaken(hostname: string): SvcError {
  return new SvcError(ErrorCode.NAME_TAKEN, BindMessages.nameTaken(hostname));
}
