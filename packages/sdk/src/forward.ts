import { randomBytes } from 'node:crypto';
import type { SecureContext } from 'node:tls';
import { setTimeout as delay } from 'node:timers/promises';
import { ErrorCode, MAX_ASKED_HEARTBEAT_MS, Messages, MIN_ASKED_HEARTBEAT_MS, SvcError, type TunnelPolicy } from '@svcrouter/protocol';
import { accessProblem, buildPolicy, type AccessOptions } from './access.js';
import { TRAFFIC_OPTION_KEYS } from './traffic-options.js';
import { AgentSession } from './agent-session.js';
import type { BindRequest } from './session-tunnel.js';
import { reconnectDelay } from './backoff.js';
import type { DialOptions } from './dial.js';
import { EdgePair, parseServerUrls } from './edge-servers.js';
import { DEFAULT_SERVER_URL, envDefault } from './env-defaults.js';
import { hostHeaderProblem, hostRewrite } from './host-header.js';
import { Inspector, type InspectOptions } from './inspector.js';
import { isOriginProto, parseLocalTarget, type LocalTarget, type OriginProto } from './local-target.js';
import { OriginProxy, type RequestLog } from './origin-proxy.js';
import { Tunnel } from './tunnel.js';
import { checkedRoutes, type CheckedRoute, type RouteOptions } from './routes.js';
import { routedProxy } from './routed-proxy.js';
import {
  idleTimeoutTooLong,
  MAX_TCP_IDLE_TIMEOUT_MS,
  parseTcpTarget,
  TcpProxy,
  type TcpConnectionLog,
  type TcpTarget,
} from './tcp-proxy.js';
import { isProxyProtocolVersion, type ProxyProtocolVersion } from './proxy-protocol.js';
import { checkedTlsOptions, tlsBind, type TlsForwardOptions } from './forward-tls.js';
import { checkOptionKinds, remoteAddrText } from './proto-options.js';

export { DEFAULT_SERVER_URL };

/** Options of forward(); the access rules (`basicAuth`, `cidrAllow`, `cidrDeny`, `oidc`, `allowEmail`, `allowDomain`) are checked at the edge. */
export interface ForwardOptions extends AccessOptions, TlsForwardOptions {
  /** Local service: a port, `host:port`, an http(s) URL or `h2c://host:port`. */
  addr: string | number;
  /**
   * HTTP version spoken to the local service: `http1` (default) or `h2`, HTTP/2 on one pooled
   * connection (prior knowledge for http, ALPN for https), which gRPC needs. An `h2c://`
   * address means `h2`. Trailers pass through either way.
   */
  proto?: OriginProto | 'tcp' | 'tls';
  /**
   * `proto: 'tcp'`: a reserved TCP address of the account (`host:port` or the port alone, POST
   * /v1/tcp-addresses) to bind; default a free port at random, the same one again after a reconnect.
   */
  remoteAddr?: string | number;
  /** `proto: 'tcp'` and `'tls'`: closes a connection idle this long, ms (default 1 h; 0: never). */
  idleTimeoutMs?: number;
  /** `proto: 'tcp'` and `'tls'`: sends the visitor's address first as a PROXY protocol `v1` or `v2` header (default none). */
  proxyProtocol?: ProxyProtocolVersion;
  /**
   * Join a pool instead of taking the name over: several agents of the same account bind the same
   * name (`subdomain`, `domain` or `remoteAddr`), and the edge sends each request (or TCP
   * connection) to the member with the fewest in flight. A name held without a pool refuses it.
   */
  pool?: boolean;
  /**
   * Paths served by other local services: the longest route whose `path` prefixes a request's
   * (on a segment boundary) takes it, WebSocket upgrades included; the rest goes to `addr`.
   * At most MAX_ROUTES; each may set its own `hostHeader` and `proto`. Bad ones are NAME_INVALID.
   */
  routes?: RouteOptions[];
  /** Agent token (`svc_…`; default SVC_TOKEN). */
  token?: string;
  /**
   * Edge URL (default SVC_SERVER, else DEFAULT_SERVER_URL). Several URLs of one cluster's nodes,
   * separated by commas: the tunnel is held through sessions to two of them at once and stays up
   * while either lives; a lost one is replaced through the next URL of the list.
   */
  serverUrl?: string;
  /** Pin the subdomain (default SVC_SUBDOMAIN); without one the edge picks a fresh random name. */
  subdomain?: string;
  /** Bind on a verified custom domain instead of the shared domain (default SVC_DOMAIN). */
  domain?: string;
  /**
   * Host header sent to the local service: `rewrite` sends the local target's `host:port`, any
   * other host (with an optional port) is sent as is; unset (default SVC_HOST_HEADER) keeps the
   * public hostname. The public one stays in X-Forwarded-Host. Anything else is NAME_INVALID.
   */
  hostHeader?: string;
  /**
   * Capture this tunnel's requests for inspection and replay (default off, so capture costs
   * nothing): true or options for a new Inspector, or an Inspector shared with other tunnels.
   * The tunnel's `inspector` property gives access to it.
   */
  inspect?: boolean | InspectOptions | Inspector;
  /** Extra CA (PEM) to trust when the edge URL is https with a dev certificate. */
  ca?: string | Buffer;
  /** Reconnect after a lost connection (default true). */
  reconnect?: boolean;
  /**
   * Dials before giving up with EDGE_UNREACHABLE when the edge cannot be reached at start
   * (default START_ATTEMPTS), spaced by the reconnect backoff. A bad token fails at once.
   */
  startAttempts?: number;
  /**
   * Heartbeat interval to ask the edge for, ms, 1,000 to 60,000 (default: the edge's, 5 s on
   * its defaults). The agent pings each interval; the edge ends a session silent for two.
   * Shorter notices a dead connection sooner, longer costs a quiet session less.
   */
  heartbeatMs?: number;
}

/** Dials at start before forward() rejects with EDGE_UNREACHABLE, spaced by the reconnect backoff. */
export const START_ATTEMPTS = 4;

/**
 * Exposes a local service through the edge and resolves once the tunnel is live.
 * Rejects with SvcError, whose `code` says what failed and whose message is the sentence to show:
 * TOKEN_INVALID (`invalid or missing svcRouter token`), TUNNEL_LIMIT (`Tunnel limit reached`),
 * BANDWIDTH_LIMIT (`Bandwidth limit reached`), NAME_TAKEN, NAME_INVALID, NAME_RESERVED,
 * DOMAIN_NOT_VERIFIED, EDGE_UNREACHABLE, POLICY_INVALID (bad access rules, or an edge too old to enforce them).
 */
export async function forward(options: ForwardOptions): Promise<Tunnel> {
  if (options.proto === 'tcp') return forwardTcp(options);
  if (options.proto === 'tls') return forwardTls(options);
  const target = localTarget(options);
  checkOptionKinds(options);
  const hostHeader = checkedHostHeader(options.hostHeader ?? envDefault('SVC_HOST_HEADER'));
  const routes = checkedRoutes(options.routes);
  const policy = await buildPolicy(options);
  const edge = await openEdge(options);
  const tunnel = await bindOn(edge, target, {
    subdomain: options.subdomain ?? envDefault('SVC_SUBDOMAIN'),
    domain: options.domain ?? envDefault('SVC_DOMAIN'),
    hostHeader,
    inspect: options.inspect,
    policy,
    routes,
    ...(options.pool === true ? { pool: true } : {}),
  });
  holdOnSecondNode(edge, [tunnel]);
  return tunnel;
}

/**
 * Binds several tunnels over one edge connection (one session), as an agent serving many
 * local services does. The returned tunnels share reconnects.
 */
export async function forwardMany(
  common: Omit<ForwardOptions, 'addr' | 'subdomain' | 'domain'>,
  tunnels: GroupTunnelSpec[],
): Promise<Tunnel[]> {
  return (await openMany(common, tunnels)).tunnels;
}

/** One tunnel of forwardMany() or an agent's group: HTTP (with its access rules) or TCP. */
export type GroupTunnelSpec = Pick<
  ForwardOptions,
  | 'addr'
  | 'proto'
  | 'subdomain'
  | 'domain'
  | 'hostHeader'
  | 'inspect'
  | 'remoteAddr'
  | 'idleTimeoutMs'
  | 'proxyProtocol'
  | 'pool'
  | keyof TlsForwardOptions
  | 'routes'
  | keyof AccessOptions
>;

/**
 * forwardMany(), also handing back the connection and the second node's session (several edge
 * URLs) that more tunnels may join later.
 */
export async function openMany(
  common: Omit<ForwardOptions, 'addr' | 'subdomain' | 'domain'>,
  tunnels: GroupTunnelSpec[],
): Promise<{ edge: OpenEdge; tunnels: Tunnel[]; standby: AgentSession | undefined }> {
  // Every address and rule is checked before dialling, so a typo never leaves half the tunnels bound.
  const checked = await Promise.all(tunnels.map(checkedTunnelSpec));
  const edge = await openEdge(common);
  const result: Tunnel[] = [];
  try {
    for (const [index, spec] of tunnels.entries()) result.push(await bindChecked(edge, spec, checked[index]!));
  } catch (error) {
    // All or nothing: a refused bind releases the tunnels bound before it.
    await Promise.all(result.map((tunnel) => tunnel.close()));
    throw error;
  }
  return { edge, tunnels: result, standby: holdOnSecondNode(edge, result) };
}

/** A tunnel's target and compiled policy, checked before anything is dialled. */
export interface CheckedTunnel {
  target: LocalTarget | TcpTarget;
  policy: TunnelPolicy | undefined;
  /** A TLS tunnel's certificate for the agent to terminate TLS with (`tlsCert`/`tlsKey`). */
  terminate?: SecureContext;
  /** An HTTP tunnel's routes, checked; empty: none. */
  routes?: CheckedRoute[];
}

/** Why a pool without a name of its own is refused. */
export const POOL_NEEDS_NAME =
  'a pool needs a name every member asks for: --subdomain or --domain (svc tcp: --remote-addr); a random name is never shared';

/** Checks one tunnel's address, host header and access rules (SvcError NAME_INVALID or POLICY_INVALID), hashing its passwords. */
export async function checkedTunnelSpec(spec: GroupTunnelSpec): Promise<CheckedTunnel> {
  checkOptionKinds(spec);
  // Members find each other by the name they ask for; each random name is a tunnel of its own.
  if (spec.pool === true && !spec.subdomain && !spec.domain && !(spec.proto === 'tcp' && spec.remoteAddr)) {
    throw new SvcError(ErrorCode.NAME_INVALID, POOL_NEEDS_NAME);
  }
  if (spec.proto === 'tls') {
    const terminate = checkedTlsOptions(spec);
    return { target: checkedTcpTarget(spec), policy: undefined, ...(terminate !== undefined ? { terminate } : {}) };
  }
  if (spec.proto === 'tcp') {
    const problem = accessProblem(spec);
    if (problem !== undefined) throw new SvcError(ErrorCode.POLICY_INVALID, problem);
    const rules = [spec.basicAuth, spec.cidrAllow, spec.cidrDeny, spec.oidc, spec.allowEmail, spec.allowDomain, spec.policy];
    for (const key of TRAFFIC_OPTION_KEYS) rules.push(spec[key] as undefined);
    if (rules.some((rule) => rule !== undefined)) {
      throw new SvcError(ErrorCode.POLICY_INVALID, 'access and traffic rules apply to HTTP tunnels only, not proto "tcp"');
    }
    if (spec.routes !== undefined && spec.routes.length > 0)
      throw new SvcError(ErrorCode.NAME_INVALID, 'routes apply to HTTP tunnels only, not proto "tcp"');
    return { target: checkedTcpTarget(spec), policy: undefined };
  }
  const target = localTarget(spec);
  checkedHostHeader(spec.hostHeader);
  const routes = checkedRoutes(spec.routes);
  const problem = accessProblem(spec);
  if (problem !== undefined) throw new SvcError(ErrorCode.POLICY_INVALID, problem);
  return { target, policy: await buildPolicy(spec), routes };
}

/** Binds a checked tunnel on the edge's first session, as HTTP or TCP. */
export function bindChecked(edge: OpenEdge, spec: GroupTunnelSpec, checked: CheckedTunnel): Promise<Tunnel> {
  const { target, policy, routes = [] } = checked;
  if ('origin' in target) return bindOn(edge, target, { ...spec, policy, routes });
  if (spec.proto !== 'tls') return bindTcpOn(edge, target, spec);
  return bindTcpOn(edge, target, spec, tlsBind(spec), checked.terminate);
}

/**
 * A TCP tunnel: a port on the edge whose connections reach `addr` (`port` or `host:port`) as raw
 * bytes. Resolves once the port is live; the tunnel's `url` is `tcp://<edge host>:<port>`.
 */
async function forwardTcp(options: ForwardOptions): Promise<Tunnel> {
  const { target } = await checkedTunnelSpec(options);
  const edge = await openEdge(options);
  const tunnel = await bindTcpOn(edge, target as TcpTarget, options);
  holdOnSecondNode(edge, [tunnel]);
  return tunnel;
}

/** A TLS passthrough tunnel: a hostname whose TLS connections reach `addr` undecrypted; its `url` is `tls://<host>:<port>`. */
async function forwardTls(options: ForwardOptions): Promise<Tunnel> {
  const checked = await checkedTunnelSpec(options);
  const edge = await openEdge(options);
  const tunnel = await bindChecked(edge, options, checked);
  holdOnSecondNode(edge, [tunnel]);
  return tunnel;
}

/** A TCP tunnel's local target and options, checked before dialling; bad ones are NAME_INVALID. */
function checkedTcpTarget(options: Pick<ForwardOptions, 'addr' | 'proxyProtocol' | 'idleTimeoutMs' | 'remoteAddr'>): TcpTarget {
  const target = parseTcpTarget(options.addr);
  if (typeof target === 'string') throw new SvcError(ErrorCode.NAME_INVALID, target);
  if (options.remoteAddr !== undefined && remoteAddrText(options.remoteAddr) === undefined) {
    throw new SvcError(ErrorCode.NAME_INVALID, `invalid remoteAddr ${JSON.stringify(options.remoteAddr)}: expected host:port or a port`);
  }
  if (options.proxyProtocol !== undefined && !isProxyProtocolVersion(options.proxyProtocol)) {
    throw new SvcError(ErrorCode.NAME_INVALID, `invalid proxy protocol "${String(options.proxyProtocol)}": expected v1 or v2`);
  }
  const idle = options.idleTimeoutMs;
  if (idle !== undefined && (!Number.isInteger(idle) || idle < 0)) {
    throw new SvcError(ErrorCode.NAME_INVALID, `invalid idle timeout ${String(idle)}: expected a whole number of ms, 0 for none`);
  }
  if (idle !== undefined && idle > MAX_TCP_IDLE_TIMEOUT_MS)
    throw new SvcError(ErrorCode.NAME_INVALID, `idle timeout ${idleTimeoutTooLong(`${idle}ms`)}`);
  return target;
}

/** Binds a TCP tunnel, or with `tls` a TLS passthrough one on a hostname (`terminate`: the agent's own certificate). */
async function bindTcpOn(
  edge: OpenEdge,
  target: TcpTarget,
  options: Pick<ForwardOptions, 'remoteAddr' | 'idleTimeoutMs' | 'proxyProtocol' | 'pool'>,
  tls?: Pick<BindRequest, 'subdomain' | 'domain'>,
  terminate?: SecureContext,
): Promise<Tunnel> {
  const { session } = edge;
  const request: BindRequest =
    tls === undefined ? { local: target.hostPort, proto: 'tcp' } : { local: target.hostPort, proto: 'tls', ...tls };
  if (options.pool === true) request.pool = true;
  if (edge.group !== undefined) request.group = edge.group;
  const remoteAddr = remoteAddrText(options.remoteAddr);
  if (remoteAddr !== undefined) request.remoteAddr = remoteAddr;
  let tunnel: Tunnel | undefined;
  const onLog = (log: TcpConnectionLog): void => {
    if (tunnel === undefined) return;
    tunnel.openRequests--;
    tunnel.emit('connection', log);
  };
  const proxy = new TcpProxy(target, onLog, {
    ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
    ...(options.proxyProtocol !== undefined ? { proxyProtocol: options.proxyProtocol } : {}),
    ...(terminate !== undefined ? { terminate } : {}),
  });
  tunnel = new Tunnel(session, target, proxy, request);
  try {
    tunnel.onBound(await session.bind(request, tunnel));
  } catch (error) {
    await proxy.close();
    if (session.tunnelCount === 0) await session.close();
    throw error;
  }
  return tunnel;
}

/** The first connection of an agent, with what a second one needs when several edge URLs were given. */
export interface OpenEdge {
  session: AgentSession;
  dial: DialOptions;
  servers: string[];
  reconnect: boolean;
  /** Names this agent process to the edge when it holds its tunnels through two nodes. */
  group: string | undefined;
}

/** Parses the edge URLs and opens the first connection, trying the URLs in turn. */
export async function openEdge(
  options: Pick<ForwardOptions, 'token' | 'serverUrl' | 'ca' | 'reconnect' | 'startAttempts' | 'heartbeatMs'>,
): Promise<OpenEdge> {
  const dial = dialOptions(options);
  const servers = parseServerUrls(dial.serverUrl);
  const reconnect = options.reconnect ?? true;
  const session = new AgentSession({ ...dial, serverUrl: servers[0]! }, reconnect);
  await connectWithRetries(session, options.startAttempts, servers);
  return { session, dial, servers, reconnect, group: servers.length > 1 ? randomBytes(12).toString('base64url') : undefined };
}

/**
 * With several edge URLs, a second connection to another node binds every tunnel again under the
 * hostname the first got, in the background: the tunnels are live already, and a second node
 * that is down now is dialled again with backoff until it answers.
 */
export function holdOnSecondNode(edge: OpenEdge, tunnels: Tunnel[]): AgentSession | undefined {
  if (edge.servers.length < 2 || tunnels.length === 0) return undefined;
  const pair = new EdgePair(edge.servers);
  const standby = new AgentSession({ ...edge.dial, serverUrl: pair.standbyStart(edge.session.serverUrl) }, edge.reconnect);
  pair.link(edge.session, standby);
  for (const tunnel of tunnels) tunnel.attachStandby(standby);
  standby.startInBackground();
  return standby;
}

/** The local target of forward() options; a bad address or proto is NAME_INVALID. */
export function localTarget(options: Pick<ForwardOptions, 'addr' | 'proto'>): LocalTarget {
  if (options.proto !== undefined && !isOriginProto(options.proto)) {
    if (options.proto === 'tcp') throw new SvcError(ErrorCode.NAME_INVALID, 'proto "tcp" binds a TCP tunnel: use forward()');
    throw new SvcError(ErrorCode.NAME_INVALID, `invalid proto "${String(options.proto)}": expected http1, h2, tcp or tls`);
  }
  const target = parseLocalTarget(options.addr, options.proto);
  if (typeof target === 'string') throw new SvcError(ErrorCode.NAME_INVALID, target);
  return target;
}

/** The host header option as given; one that is neither `rewrite` nor a host is NAME_INVALID. */
export function checkedHostHeader(value: string | undefined): string | undefined {
  const problem = value === undefined ? undefined : hostHeaderProblem(value);
  if (problem !== undefined) throw new SvcError(ErrorCode.NAME_INVALID, problem);
  return value;
}

/**
 * Connects, retrying an unreachable edge with the reconnect backoff (an edge restarting as the
 * agent starts is common in development). The last failure's message says how many dials it took.
 */
async function connectWithRetries(session: AgentSession, attempts = START_ATTEMPTS, servers: readonly string[] = []): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    // Several edge URLs: each dial tries the next one.
    if (servers.length > 1) session.useServer(servers[(attempt - 1) % servers.length]!);
    try {
      return await session.connect();
    } catch (error) {
      const unreachable = error instanceof SvcError && error.code === ErrorCode.EDGE_UNREACHABLE;
      if (!unreachable) throw error;
      if (attempt >= attempts) {
        throw attempts === 1 ? error : new SvcError(ErrorCode.EDGE_UNREACHABLE, `${error.message}, after ${attempts} attempts`);
      }
      await delay(reconnectDelay(attempt - 1));
    }
  }
}

/** The inspector a tunnel captures into: none unless asked, a shared one as given, else a new one. */
function inspectorFor(option: ForwardOptions['inspect']): Inspector | undefined {
  if (option === undefined || option === false) return undefined;
  if (option instanceof Inspector) return option;
  return new Inspector(option === true ? {} : option);
}

/** Where to dial, with the SVC_* defaults; no token at all is refused before dialling. */
function dialOptions(options: Pick<ForwardOptions, 'token' | 'serverUrl' | 'ca' | 'heartbeatMs'>): DialOptions {
  const token = options.token ?? envDefault('SVC_TOKEN');
  if (!token) throw new SvcError(ErrorCode.TOKEN_INVALID, Messages.TOKEN_INVALID);
  const { heartbeatMs } = options;
  if (
    heartbeatMs !== undefined &&
    !(Number.isInteger(heartbeatMs) && heartbeatMs >= MIN_ASKED_HEARTBEAT_MS && heartbeatMs <= MAX_ASKED_HEARTBEAT_MS)
  ) {
    throw new RangeError(
      `heartbeatMs must be a whole number of ms from ${MIN_ASKED_HEARTBEAT_MS} to ${MAX_ASKED_HEARTBEAT_MS}, got ${heartbeatMs}`,
    );
  }
  const dial: DialOptions = { serverUrl: options.serverUrl ?? envDefault('SVC_SERVER') ?? DEFAULT_SERVER_URL, token, ca: options.ca };
  if (heartbeatMs !== undefined) dial.heartbeatMs = heartbeatMs;
  return dial;
}

/** Binds one tunnel on the edge's first session; a refusal closes the session when it carries nothing else. */
export async function bindOn(
  edge: OpenEdge,
  target: LocalTarget,
  options: Pick<ForwardOptions, 'subdomain' | 'domain' | 'hostHeader' | 'inspect' | 'pool'> & {
    policy: TunnelPolicy | undefined;
    routes?: readonly CheckedRoute[];
  },
): Promise<Tunnel> {
  const { session } = edge;
  const request: BindRequest = { local: target.hostPort };
  if (options.pool === true) request.pool = true;
  if (options.policy !== undefined) request.policy = options.policy;
  if (edge.group !== undefined) request.group = edge.group;
  if (options.subdomain !== undefined) request.subdomain = options.subdomain;
  if (options.domain !== undefined) request.domain = options.domain;
  let tunnel: Tunnel | undefined;
  const onLog = (log: RequestLog): void => {
    if (tunnel === undefined) return;
    tunnel.openRequests--;
    tunnel.emit('request', log);
  };
  const inspector = inspectorFor(options.inspect);
  // The url is known once bound; the capture hook reads it per request, after that.
  const inspected = { url: '', target, hostHeader: options.hostHeader };
  const main = new OriginProxy(target, onLog, hostRewrite(options.hostHeader, target), inspector?.tap(inspected));
  // Routes cost only the tunnels that have them: others hand each stream to `main` directly.
  const proxy = routedProxy(main, options.routes ?? [], request, onLog, inspector, inspected);
  tunnel = new Tunnel(session, target, proxy, request);
  tunnel.inspector = inspector;
  tunnel.routes = options.routes ?? [];
  try {
    tunnel.onBound(await session.bind(request, tunnel));
    if (inspector) {
      inspected.url = tunnel.url;
      inspector.track(inspected);
      tunnel.once('end', () => inspector.forget(inspected));
    }
  } catch (error) {
    await proxy.close();
    if (session.tunnelCount === 0) await session.close();
    throw error;
  }
  return tunnel;
}
