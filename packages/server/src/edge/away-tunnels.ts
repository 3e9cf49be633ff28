import { ErrorCode, SvcError, type AgentMessage } from '@svcrouter/protocol';
import type { Binder } from './binder.js';
import type { Holds } from './hold.js';
import type { Binding } from './router.js';
import type { TcpTunnels } from './tcp/tcp-tunnels.js';

// A session the server ends on purpose releases its names at once; only a lost connection keeps
// the name's grace and the hold of its visitors. A tunnel whose agent is already away (lost, in
// its grace) can still be ended on purpose afterwards: deleted, found beyond a lowered plan, or its
// agent back but refused for the account's tunnel limit. Then the grace must end as if the session
// had been ended on purpose in the first place, or the name and its visitors wait for nothing.

/** What ending an away tunnel touches: the grace (Binder), the held visitors, a TCP tunnel's port. */
export interface AwayParts {
  binder: Binder;
  holds: Holds;
  tcp: TcpTunnels | undefined;
}

/**
 * Ends the grace of a tunnel whose agent is away: the visitors held for it get the offline page
 * now, and its name (a TCP tunnel's port too) is free for anyone. Returns the lost binding, or
 * undefined when the tunnel had no grace on this node.
 */
export function endAwayTunnel(parts: AwayParts, tunnelId: string): Binding | undefined {
  const lost = parts.binder.endGrace(tunnelId);
  if (!lost) return undefined;
  parts.holds.expire(lost.hostname);
  parts.tcp?.unbound(lost, true);
  return lost;
}

/**
 * A bind refused for the account's tunnel limit by an agent taking back a name in its grace: the
 * agent gives up (it exits with the refusal), so nothing will bind the name for that account, and
 * its grace ends (see endAwayTunnel). Returns the lost binding whose grace ended, if any.
 */
export function endRefusedReturn(
  parts: AwayParts,
  accountId: string,
  request: Extract<AgentMessage, { type: 'bind' }>,
  error: unknown,
): Binding | undefined {
  if (!(error instanceof SvcError) || error.code !== ErrorCode.TUNNEL_LIMIT) return undefined;
  if (typeof request.hostname !== 'string') return undefined;
  const hostname = request.hostname.toLowerCase();
  const lost = parts.binder.graceBindings().find((binding) => binding.hostname === hostname && binding.accountId === accountId);
  return lost && endAwayTunnel(parts, lost.tunnelId);
}
