import type { EdgeMessage } from '@svcrouter/protocol';

/** An agent session as the drain sees it: a control channel and a count of open streams. */
export interface DrainableSession {
  send(message: EdgeMessage): void;
  readonly isClosed: boolean;
  readonly mux: { readonly streamCount: number };
}

/** What a drain ended with: how long it waited, and the streams still open when it stopped. */
export interface DrainOutcome {
  waitedMs: number;
  streamsLeft: number;
}

/**
 * How often the drain looks at the open streams. The multiplexer has no event for "last stream
 * closed", and a shutdown can afford to notice a few tens of milliseconds late.
 */
const DRAIN_CHECK_MS = 25;

export const LEAVING_MESSAGE = 'the edge is restarting';

/**
 * The first half of a graceful shutdown, once the listeners take no new connections: every agent
 * is told the node is leaving (so it reconnects without treating the loss as a failure), then
 * the requests already on their streams get up to `drainMs` to finish.
 */
export async function drainSessions(sessions: () => Iterable<DrainableSession>, drainMs: number): Promise<DrainOutcome> {
  const started = performance.now();
  for (const session of sessions()) {
    if (!session.isClosed) session.send({ type: 'leaving', message: LEAVING_MESSAGE });
  }
  let streamsLeft = openStreams(sessions());
  while (streamsLeft > 0 && performance.now() - started < drainMs) {
    const remaining = drainMs - (performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, Math.min(DRAIN_CHECK_MS, remaining)));
    streamsLeft = openStreams(sessions());
  }
  return { waitedMs: Math.round(performance.now() - started), streamsLeft };
}

function openStreams(sessions: Iterable<DrainableSession>): number {
  let open = 0;
  for (const session of sessions) if (!session.isClosed) open += session.mux.streamCount;
  return open;
}
