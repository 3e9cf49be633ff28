import type { Binding, Pool } from './edge-session.js';

export type { Pool };

/**
 * The member a request goes to: the one with the fewest requests in flight, round robin among
 * equals, skipping closed sessions and the members in `tried` (a retry's earlier members).
 * One pass over the members, no allocation.
 */
export function pickMember(pool: Pool, tried?: readonly Binding[]): Binding | undefined {
  const { members } = pool;
  const count = members.length;
  let best: Binding | undefined;
  let bestIndex = 0;
  for (let step = 0; step < count; step++) {
    const index = (pool.next + step) % count;
    const member = members[index]!;
    if (member.session.isClosed || (tried !== undefined && tried.includes(member))) continue;
    if (best === undefined || (member.inFlight ?? 0) < (best.inFlight ?? 0)) {
      best = member;
      bestIndex = index;
    }
  }
  if (best !== undefined) pool.next = (bestIndex + 1) % count;
  return best;
}
