import { ErrorCode, SvcError, type ErrorCodeValue } from '@svcrouter/protocol';
import {
  parseLocalTarget,
  parseTcpTarget,
  type AccessOptions,
  type GroupTunnelOptions,
  type Inspector,
  type LocalTarget,
  type RouteOptions,
  type TcpTarget,
  type Tunnel,
  type TunnelGroup,
} from '@svcrouter/sdk';
import { routeOptionsOf } from './config-routes.js';
import { localOf, warnWhereNothingListens } from './local-probe.js';
import type { Output, TunnelView } from './output.js';
import type { TcpFlags } from './args.js';
import { readTlsPair, type TlsFlags } from './tls-flags.js';
import { TunnelControlError, type ApiTunnel, type NewTunnel, type TunnelControl } from './inspector/tunnels-api.js';
import { trafficOptionsOf } from './traffic-flags.js';

/** The agent API's name of the tunnel `svc http` starts (ngrok's agent calls it the same). */
export const COMMAND_LINE_TUNNEL = 'command_line';

/** How a refused bind answers on the agent API: status and the code's lower-case name. */
const BIND_STATUS: Partial<Record<ErrorCodeValue, number>> = {
  [ErrorCode.NAME_INVALID]: 400,
  [ErrorCode.NAME_RESERVED]: 400,
  [ErrorCode.DOMAIN_NOT_VERIFIED]: 400,
  [ErrorCode.TUNNEL_LIMIT]: 403,
  [ErrorCode.NAME_TAKEN]: 409,
  [ErrorCode.BANDWIDTH_LIMIT]: 429,
  [ErrorCode.SESSION_CLOSED]: 503,
  [ErrorCode.EDGE_UNREACHABLE]: 503,
  [ErrorCode.TOKEN_INVALID]: 503,
};

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
  /** `--pool`: one of several agents serving the name. */
  pool?: boolean;
  /** `--route`: paths served by other local services. */
  routes?: RouteOptions[];
  /** Access rules checked at the edge (basic auth, IP rules); empty: none. */
  access?: AccessOptions;
  /** Captures this tunnel's requests; undefined when inspection is off for it. */
  inspector?: Inspector;
}

/** One live tunnel of the agent. */
interface Entry {
  name: string;
  spec: TunnelSpec;
  tunnel: Tunnel;
  view: TunnelView;
  /** Stopped through the agent API: its end leaves the agent running. */
  removed: boolean;
}

/**
 * The running agent's tunnels by name, over one TunnelGroup: the ones it started with and those
 * the agent API adds and removes. Long-lived state, hence a class. The agent runs until
 * `stopped` resolves: on stop(), or when its last tunnel ends by anything but the agent API
 * (a release by the server, a failure), as an agent without the API always did.
 */
export class AgentTunnels implements TunnelControl {
  private readonly entries = new Map<string, Entry>();
  /** Names being added, so two POSTs of one name cannot both bind. */
  private readonly adding = new Set<string>();
  private readonly errors: Array<SvcError | undefined> = [];
  private stopping = false;
  private resolveStopped!: () => void;
  /** Resolves when the agent should exit; errors() then says how its tunnels ended. */
  readonly stopped = new Promise<void>((resolve) => (this.resolveStopped = resolve));

  constructor(
    private readonly group: TunnelGroup,
    private readonly output: Output,
    private readonly inspector: Inspector | undefined,
  ) {}

  /** Tracks a tunnel the agent started with, under `name`; `view` is what the output shows. */
  track(name: string, spec: TunnelSpec, tunnel: Tunnel, view: TunnelView): void {
    const entry: Entry = { name, spec, tunnel, view, removed: false };
    this.entries.set(name, entry);
    tunnel.once('end', (error) => this.ended(entry, error));
    const output = this.output;
    // The tunnels share one session: its losses are reported once, by the oldest live tunnel.
    const reportsSession = (): boolean => this.entries.values().next().value === entry;
    tunnel.on('request', (log) => output.request(view, log));
    tunnel.on('connection', (log) => output.connection(view, log));
    // One line per episode of lost connection, however many dials it takes, and one when back.
    tunnel.on('reconnecting', ({ attempt, reason, planned }) => {
      if (attempt === 1 && reportsSession()) output.reconnecting(view, reason, planned);
    });
    // Several edge URLs: one node lost while the other serves is news, not an outage.
    tunnel.on('failover', ({ lost, reason }) => {
      if (reportsSession()) output.failover(lost, reason);
    });
    tunnel.on('restored', ({ server }) => {
      if (reportsSession()) output.restored(server);
    });
    tunnel.on('reconnected', (url) => {
      view.url = url;
      if (view.port !== undefined) view.port = Number(new URL(url).port);
      output.reconnected(view);
    });
  }

  /** Every live tunnel, oldest first. */
  get tunnels(): Tunnel[] {
    return [...this.entries.values()].map((entry) => entry.tunnel);
  }

  /** Round trip to the edge, ms. */
  get rttMs(): number | undefined {
    return this.group.rttMs;
  }

  /** How the tunnels that ended did, in order (undefined: closed cleanly). */
  get endings(): ReadonlyArray<SvcError | undefined> {
    return this.errors;
  }

  list(): ApiTunnel[] {
    return [...this.entries.values()].map(apiTunnel);
  }

  async add(body: NewTunnel): Promise<ApiTunnel> {
    if (this.stopping) throw new TunnelControlError(503, 'stopping', 'the agent is stopping');
    if (this.entries.has(body.name) || this.adding.has(body.name)) {
      throw new TunnelControlError(409, 'name_in_use', `this agent already runs a tunnel named "${body.name}"`);
    }
    // The schema checked the address already, and that a TCP tunnel carries no HTTP settings.
    const spec: TunnelSpec =
      body.proto === 'tcp' || body.proto === 'tls'
        ? { name: body.name, target: parseTcpTarget(String(body.addr)) as TcpTarget, tcp: tcpFlags(body) }
        : { name: body.name, target: parseLocalTarget(body.addr, body.proto) as LocalTarget };
    if (body.subdomain !== undefined) spec.subdomain = body.subdomain;
    if (body.domain !== undefined) spec.domain = body.domain;
    if (body.hostHeader !== undefined) spec.hostHeader = body.hostHeader;
    if (body.pool === true) spec.pool = true;
    if (body.routes !== undefined) spec.routes = routeOptionsOf(body.routes)!;
    spec.access = {
      basicAuth: body.basicAuth,
      cidrAllow: body.cidrAllow,
      cidrDeny: body.cidrDeny,
      oidc: body.oidc,
      allowEmail: body.allowEmail,
      allowDomain: body.allowDomain,
      ...trafficOptionsOf(body),
    };
    if (body.inspect !== false) spec.inspector = this.inspector;
    this.adding.add(body.name);
    let tunnel: Tunnel;
    try {
      tunnel = await this.group.add(groupTunnelOptions(spec));
    } catch (error) {
      throw refusedBind(error);
    } finally {
      this.adding.delete(body.name);
    }
    if (this.stopping) {
      await tunnel.close();
      throw new TunnelControlError(503, 'stopping', 'the agent is stopping');
    }
    const view: TunnelView = { name: body.name, url: tunnel.url, local: localOf(spec.target) };
    if (!('origin' in spec.target)) view.port = Number(new URL(tunnel.url).port);
    if (tunnel.routes.length > 0) view.routes = routeViews(tunnel);
    this.track(body.name, spec, tunnel, view);
    this.output.added(view);
    void warnWhereNothingListens(
      spec.target,
      tunnel.routes.map((route) => route.target),
      this.output,
    );
    return apiTunnel(this.entries.get(body.name)!);
  }

  async remove(name: string): Promise<ApiTunnel | undefined> {
    const entry = this.entries.get(name);
    if (!entry) return undefined;
    entry.removed = true;
    await this.group.remove(entry.tunnel);
    return apiTunnel(entry);
  }

  /** Closes every tunnel; `stopped` resolves once they are off the edge. */
  async stop(): Promise<void> {
    this.stopping = true;
    const closing = [...this.entries.values()].map((entry) => entry.tunnel.close());
    if (closing.length === 0) this.resolveStopped();
    await Promise.all(closing);
  }

  private ended(entry: Entry, error: SvcError | undefined): void {
    if (this.entries.get(entry.name) === entry) this.entries.delete(entry.name);
    if (entry.removed && !this.stopping) {
      this.output.removed(entry.view);
      return;
    }
    this.errors.push(error);
    if (this.entries.size === 0) this.resolveStopped();
  }
}

/** What the SDK binds for a tunnel spec. */
export function groupTunnelOptions(spec: TunnelSpec): GroupTunnelOptions {
  if (!('origin' in spec.target)) {
    const { tls, ...tcp } = spec.tcp ?? {};
    if (tls === undefined) return { addr: spec.target.hostPort, proto: 'tcp', ...tcp };
    const { subdomain, domain, tlsCert, tlsKey } = tls;
    return { addr: spec.target.hostPort, proto: 'tls', ...tcp, subdomain, domain, tlsCert, tlsKey };
  }
  return {
    addr: spec.target.origin,
    proto: spec.target.proto,
    subdomain: spec.subdomain,
    domain: spec.domain,
    hostHeader: spec.hostHeader,
    inspect: spec.inspector,
    ...(spec.pool === true ? { pool: true } : {}),
    ...(spec.routes !== undefined ? { routes: spec.routes } : {}),
    ...spec.access,
  };
}

/** What the output shows of a tunnel's routes: each path and its local target URL. */
export function routeViews(tunnel: Tunnel): Array<{ path: string; local: string }> {
  return tunnel.routes.map((route) => ({ path: route.path, local: route.target.origin }));
}

/** A TCP tunnel's options from the agent API's body (the config file's keys). */
function tcpFlags(body: NewTunnel): TcpFlags {
  const flags: TcpFlags = {};
  if (body.remoteAddr !== undefined) flags.remoteAddr = body.remoteAddr;
  if (body.idleTimeoutMs !== undefined) flags.idleTimeoutMs = body.idleTimeoutMs;
  if (body.proxyProtocol !== undefined) flags.proxyProtocol = body.proxyProtocol;
  if (body.pool === true) flags.pool = true;
  if (body.proto === 'tls') {
    const tls: TlsFlags = {};
    if (body.subdomain !== undefined) tls.subdomain = body.subdomain;
    if (body.domain !== undefined) tls.domain = body.domain;
    if (body.tlsCert !== undefined) tls.certFile = body.tlsCert;
    if (body.tlsKey !== undefined) tls.keyFile = body.tlsKey;
    const read = readTlsPair(tls);
    if (typeof read === 'string') throw new TunnelControlError(400, 'invalid_tunnel', read);
    flags.tls = read;
  }
  return flags;
}

function apiTunnel(entry: Entry): ApiTunnel {
  const tunnel: ApiTunnel = {
    name: entry.name,
    url: entry.tunnel.url,
    proto: 'origin' in entry.spec.target ? entry.spec.target.proto : entry.spec.tcp?.tls !== undefined ? 'tls' : 'tcp',
    local: localOf(entry.spec.target),
    hostHeader: entry.spec.hostHeader ?? null,
    inspect: entry.spec.inspector !== undefined,
  };
  if (entry.tunnel.routes.length > 0) tunnel.routes = routeViews(entry.tunnel);
  return tunnel;
}

/** A refused bind as the agent API answers it. */
function refusedBind(error: unknown): TunnelControlError {
  if (!(error instanceof SvcError)) return new TunnelControlError(502, 'bind_failed', `cannot start the tunnel: ${String(error)}`);
  const status = BIND_STATUS[error.code] ?? 502;
  const message = error.code === ErrorCode.SESSION_CLOSED ? `${error.message}; the agent is reconnecting, try again` : error.message;
  return new TunnelControlError(status, error.code.toLowerCase(), message);
}
