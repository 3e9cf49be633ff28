import type { EdgeMessage } from '@svcrouter/protocol';

/** An agent session as the drain sees it: a control channel and a count of open streams. */
export interface DrainableSession {
  send(message: EdgeMessage): void;
  readonly isClosed: boolean;
  readonly mux: { readonly streamCount: number };
  /** Its tunnels; `group` set: the agent holds them through another node too and moves them on 'leaving'. */
  readonly bindings: ReadonlyMap<string, { readonly group?: string | undefined }>;
}

/** What a drain ended with: how long it waited, the tunnels not moved away and the streams still open when it stopped. */
export interface DrainOutcome {
  waitedMs: number;
  unmoved: number;
  streamsLeft: number;
}

/**
 * How often the drain looks at the open streams. The multiplexer has no event for "last stream
 * closed", and a shutdown can afford to notice a few tens of milliseconds late.
 */
const DRAIN_CHECK_MS = 25;

export const LEAVING_MESSAGE = 'the edge is restarting';

/** Tells every agent the node is leaving: it reconnects without calling the loss a failure, or moves to another node. */
export function tellLeaving(sessions: Iterable<DrainableSession>): void {
  for (const session of sessions) {
    if (!session.isClosed) session.send({ type: 'leaving', message: LEAVING_MESSAGE });
  }
}

/**
 * The first half of a graceful shutdown, once the agents were told (tellLeaving) and the
 * listeners take no new connections. Agents holding their tunnels through several nodes bind
 * them on another node and then unbind them here; until they have (or `drainMs` is over) this
 * node keeps routing to them. Then the requests already on their streams get what is left of
 * `drainMs` to finish.
 */
export async function drainSessions(
  sessions: () => Iterable<DrainableSession>,
  drainMs: number,
  /** Requests in flight elsewhere (a visitor's request carried to another edge node). */
  otherStreams: () => number = () => 0,
): Promise<DrainOutcome> {
  const started = performance.now();
  let unmoved = groupedTunnels(sessions());
  while (unmoved > 0 && performance.now() - started < drainMs) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(DRAIN_CHECK_MS, drainMs - (performance.now() - started))));
    unmoved = groupedTunnels(sessions());
  }
  let streamsLeft = openStreams(sessions()) + otherStreams();
  while (streamsLeft > 0 && performance.now() - started < drainMs) {
    const remaining = drainMs - (performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, Math.min(DRAIN_CHECK_MS, remaining)));
    streamsLeft = openStreams(sessions()) + otherStreams();
  }
  return { waitedMs: Math.round(performance.now() - started), unmoved, streamsLeft };
}

function groupedTunnels(sessions: Iterable<DrainableSession>): number {
  let count = 0;
  for (const session of sessions) {
    if (session.isClosed) continue;
    for (const binding of session.bindings.values()) if (binding.group !== undefined) count++;
  }
  return count;
}

function openStreams(sessions: Iterable<DrainableSession>): number {
  let open = 0;
  for (const session of sessions) if (!session.isClosed) open += session.mux.streamCount;
  return open;
}
