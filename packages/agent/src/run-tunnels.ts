import { ErrorCode, type SvcError } from '@svcrouter/protocol';
import { forwardMany, parseServerUrls, type Inspector, type LocalTarget, type TcpTarget, type Tunnel } from '@svcrouter/sdk';
import type { TcpFlags } from './args.js';
import { explainFailure, notListeningWarning } from './failure.js';
import { probeLocal } from './local-probe.js';
import type { Output, ScreenStatus, TunnelView } from './output.js';
import { accountStatus } from './account-status.js';

/** How often the live screen's round trip and open-request count are refreshed, ms. */
const STATUS_INTERVAL_MS = 1000;

/** One tunnel to start, resolved from the command line or a config file. */
export interface TunnelSpec {
  /** Name in the config file; empty for `svc http`. */
  name: string;
  /** An HTTP tunnel's local URL, or a TCP tunnel's `host:port`. */
  target: LocalTarget | TcpTarget;
  /** A TCP tunnel's options (`svc tcp`, `proto: tcp`). */
  tcp?: TcpFlags;
  subdomain?: string;
  domain?: string;
  hostHeader?: string;
  /** Captures this tunnel's requests; undefined when inspection is off for it. */
  inspector?: Inspector;
}

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
  /** Called once the tunnels are live (the inspector attaches here). */
  onStarted?(tunnels: Tunnel[]): void | Promise<void>;
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

  const starting = forwardMany(
    { token: session.token, serverUrl: session.server, ca: session.ca },
    specs.map((spec) =>
      'origin' in spec.target
        ? {
            addr: spec.target.origin,
            proto: spec.target.proto,
            subdomain: spec.subdomain,
            domain: spec.domain,
            hostHeader: spec.hostHeader,
            inspect: spec.inspector,
          }
        : { addr: spec.target.hostPort, proto: 'tcp' as const, ...spec.tcp },
    ),
  );
  const started = await Promise.race([
    starting.then(
      (tunnels) => ({ tunnels }),
      (error: unknown) => ({ error }),
    ),
    stopRequested.then(() => undefined),
  ]);
  if (started === undefined) {
    // Stopped while connecting: give back whatever the edge may still bind, then leave.
    void starting.then(
      (tunnels) => Promise.all(tunnels.map((tunnel) => tunnel.close())),
      () => undefined,
    );
    return 0;
  }
  if ('error' in started) {
    output.failure(explainFailure(started.error));
    return 1;
  }
  const tunnels = started.tunnels;
  const views = tunnels.map((tunnel, index): TunnelView => {
    const target = specs[index]!.target;
    const view: TunnelView = { name: specs.length > 1 ? specs[index]!.name : '', url: tunnel.url, local: localOf(target) };
    if (!('origin' in target)) view.port = Number(new URL(tunnel.url).port);
    return view;
  });
  output.started(views);
  await hooks.onStarted?.(tunnels);
  void warnIfNotListening(specs, output);
  // The tunnels share one session: its losses are reported once, by the first tunnel.
  tunnels.forEach((tunnel, index) => watch(tunnel, views[index]!, output, index === 0));
  const stopStatus = output.status ? followStatus(tunnels, session, output.status.bind(output)) : () => undefined;

  const ends = tunnels.map((tunnel) => new Promise<SvcError | undefined>((resolve) => tunnel.once('end', resolve)));
  void stopRequested.then(() => Promise.all(tunnels.map((tunnel) => tunnel.close())));
  const errors = await Promise.all(ends);
  stopStatus();
  // The first real failure decides the exit; a release by the server is a normal end.
  const failure = errors.find((error) => error !== undefined && error.code !== ErrorCode.TUNNEL_RELEASED);
  const released = errors.find((error) => error?.code === ErrorCode.TUNNEL_RELEASED);
  output.closed(failure ? explainFailure(failure) : undefined, released?.message);
  return failure ? 1 : 0;
}

/** Forwards one tunnel's events to the output. */
function watch(tunnel: Tunnel, view: TunnelView, output: Output, reportsSession: boolean): void {
  tunnel.on('request', (log) => output.request(view, log));
  tunnel.on('connection', (log) => output.connection(view, log));
  // One line per episode of lost connection, however many dials it takes, and one when back.
  tunnel.on('reconnecting', ({ attempt, reason, planned }) => {
    if (attempt === 1 && reportsSession) output.reconnecting(view, reason, planned);
  });
  // Several edge URLs: one node lost while the other serves is news, not an outage.
  tunnel.on('failover', ({ lost, reason }) => {
    if (reportsSession) output.failover(lost, reason);
  });
  tunnel.on('restored', ({ server }) => {
    if (reportsSession) output.restored(server);
  });
  tunnel.on('reconnected', (url) => {
    view.url = url;
    if (view.port !== undefined) view.port = Number(new URL(url).port);
    output.reconnected(view);
  });
}

/** Feeds the live screen: the account once, then round trip and open requests every STATUS_INTERVAL_MS. */
function followStatus(tunnels: Tunnel[], session: SessionSpec, status: (update: ScreenStatus) => void): () => void {
  void accountStatus(parseServerUrls(session.server)[0]!, session.token).then(status);
  const timer = setInterval(() => {
    const open = tunnels.reduce((sum, tunnel) => sum + tunnel.openRequests, 0);
    status({ rttMs: tunnels[0]!.rttMs, open });
  }, STATUS_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** Warns (once, at start) about each local target where nothing listens yet. */
async function warnIfNotListening(specs: TunnelSpec[], output: Output): Promise<void> {
  for (const spec of specs) {
    const target = spec.target;
    const code = await probeLocal('origin' in target ? target : { host: target.host, port: target.port });
    if (code !== undefined) output.warning(notListeningWarning(localOf(target), code));
  }
}

/** What the output shows as a tunnel's local side: the URL, or a TCP tunnel's `host:port`. */
function localOf(target: LocalTarget | TcpTarget): string {
  return 'origin' in target ? target.origin : target.hostPort;
}
