import { ErrorCode } from '@svcrouter/protocol';
import { parseServerUrls, TunnelGroup, type Inspector, type Tunnel } from '@svcrouter/sdk';
import { AgentTunnels, COMMAND_LINE_TUNNEL, groupTunnelOptions, routeViews, type TunnelSpec } from './agent-tunnels.js';
import { explainFailure } from './failure.js';
import { localOf, warnWhereNothingListens } from './local-probe.js';
import type { Output, ScreenStatus, TunnelView } from './output.js';
import { accountStatus } from './account-status.js';

/** How often the live screen's round trip and open-request count are refreshed, ms. */
const STATUS_INTERVAL_MS = 1000;

export type { TunnelSpec } from './agent-tunnels.js';

/** What every tunnel of one agent shares: one session to one edge (two, to two nodes, with several URLs). */
export interface SessionSpec {
  token: string;
  /** SVC_SERVER: one edge URL, or several separated by commas. */
  server: string;
  ca?: string;
}

/** Hooks the composition root gives: signals, and what to do with live tunnels. */
export interface RunHooks {
  onStop(handler: () => void): void;
  /** Called once the tunnels are live (the agent API attaches here). */
  onStarted?(agent: AgentTunnels): void | Promise<void>;
  /** The local inspector that tunnels added through the agent API capture into, when it runs. */
  inspector?: Inspector;
}

/**
 * Starts `specs` over one session and reports through `output` until the agent stops.
 * Resolves with the exit code: 0 after a stop or a release by the server, 1 on a failure.
 */
export async function runTunnels(specs: TunnelSpec[], session: SessionSpec, output: Output, hooks: RunHooks): Promise<number> {
  // Signals are watched before anything is dialled or printed: a script that sends SIGTERM
  // as soon as it reads the Forwarding line must get the clean close, not Node's default.
  let requestStop!: () => void;
  const stopRequested = new Promise<void>((resolve) => (requestStop = resolve));
  hooks.onStop(() => requestStop());

  const starting = TunnelGroup.open({ token: session.token, serverUrl: session.server, ca: session.ca }, specs.map(groupTunnelOptions));
  const started = await Promise.race([
    starting.then(
      (opened) => opened,
      (error: unknown) => ({ error }),
    ),
    stopRequested.then(() => undefined),
  ]);
  if (started === undefined) {
    // Stopped while connecting: give back whatever the edge may still bind, then leave.
    void starting.then(
      ({ tunnels }) => Promise.all(tunnels.map((tunnel) => tunnel.close())),
      () => undefined,
    );
    return 0;
  }
  if ('error' in started) {
    output.failure(explainFailure(started.error));
    return 1;
  }
  const agent = new AgentTunnels(started.group, output, hooks.inspector);
  const views = started.tunnels.map((tunnel, index): TunnelView => {
    const spec = specs[index]!;
    const view: TunnelView = { name: specs.length > 1 ? spec.name : '', url: tunnel.url, local: localOf(spec.target) };
    if (!('origin' in spec.target)) view.port = Number(new URL(tunnel.url).port);
    if (tunnel.routes.length > 0) view.routes = routeViews(tunnel);
    agent.track(spec.name || COMMAND_LINE_TUNNEL, spec, tunnel, view);
    return view;
  });
  output.started(views);
  await hooks.onStarted?.(agent);
  void warnInOrder(specs, started.tunnels, output);
  const stopStatus = output.status ? followStatus(agent, session, output.status.bind(output)) : () => undefined;

  void stopRequested.then(() => agent.stop());
  await agent.stopped;
  stopStatus();
  // The first real failure decides the exit; a release by the server is a normal end.
  const errors = agent.endings;
  const failure = errors.find((error) => error !== undefined && error.code !== ErrorCode.TUNNEL_RELEASED);
  const released = errors.find((error) => error?.code === ErrorCode.TUNNEL_RELEASED);
  output.closed(failure ? explainFailure(failure) : undefined, released?.message);
  return failure ? 1 : 0;
}

/** Feeds the live screen: the account once, then round trip and open requests every STATUS_INTERVAL_MS. */
function followStatus(agent: AgentTunnels, session: SessionSpec, status: (update: ScreenStatus) => void): () => void {
  void accountStatus(parseServerUrls(session.server)[0]!, session.token).then(status);
  const timer = setInterval(() => {
    const open = agent.tunnels.reduce((sum, tunnel) => sum + tunnel.openRequests, 0);
    status({ rttMs: agent.rttMs, open });
  }, STATUS_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** One tunnel after another, so the warnings come in the order of the Forwarding lines. */
async function warnInOrder(specs: readonly TunnelSpec[], tunnels: readonly Tunnel[], output: Output): Promise<void> {
  for (const [index, tunnel] of tunnels.entries()) {
    await warnWhereNothingListens(
      specs[index]!.target,
      tunnel.routes.map((route) => route.target),
      output,
    );
  }
}
