import { EventEmitter } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { ErrorCode, Messages, SvcError, type CallbackStream, type MuxStream } from '@svcrouter/protocol';
import { AgentSession, type BindRequest, type Bound, type SessionTunnel } from './agent-session.js';
import { reconnectDelay } from './backoff.js';
import type { DialOptions } from './dial.js';
import { DEFAULT_SERVER_URL, envDefault } from './env-defaults.js';
import { hostRewrite } from './host-header.js';
import { Inspector, type InspectOptions } from './inspector.js';
import { isOriginProto, parseLocalTarget, type LocalTarget, type OriginProto } from './local-target.js';
import { OriginProxy, type RequestLog } from './origin-proxy.js';

export { DEFAULT_SERVER_URL };

/** Options of forward(). */
export interface ForwardOptions {
  /** Local service: a port, `host:port`, an http(s) URL or `h2c://host:port`. */
  addr: string | number;
  /**
   * HTTP version spoken to the local service: `http1` (default) or `h2`, HTTP/2 on one pooled
   * connection (prior knowledge for http, ALPN for https), which gRPC needs. An `h2c://`
   * address means `h2`. Trailers pass through either way.
   */
  proto?: OriginProto;
  /** Agent token (`svc_…`; default SVC_TOKEN). */
  token?: string;
  /** Edge URL (default SVC_SERVER, else DEFAULT_SERVER_URL). */
  serverUrl?: string;
  /** Pin the subdomain (default SVC_SUBDOMAIN); without one the edge picks a fresh random name. */
  subdomain?: string;
  /** Bind on a verified custom domain instead of the shared domain (default SVC_DOMAIN). */
  domain?: string;
  /**
   * Host header sent to the local service: `rewrite` sends the local target's `host:port`, any
   * other value is sent as is; unset keeps the public hostname. The public one stays in X-Forwarded-Host.
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
}

/** Dials at start before forward() rejects with EDGE_UNREACHABLE, spaced by the reconnect backoff. */
export const START_ATTEMPTS = 4;

/** The events of a Tunnel and their arguments, so listeners are typed. */
export interface TunnelEvents {
  request: [log: RequestLog];
  reconnecting: [info: { attempt: number; delayMs: number; reason: string; planned: boolean }];
  reconnected: [url: string];
  end: [error: SvcError | undefined];
}

/**
 * A live tunnel. Events:
 * - 'request' (RequestLog) after each visitor request completes;
 * - 'reconnecting' ({attempt, delayMs, reason, planned}) when the edge connection was lost;
 *   `planned` when the edge announced it was leaving (a restart), not a failure;
 * - 'reconnected' (url) when the tunnel is live again, under the same hostname;
 * - 'end' (SvcError | undefined) once, when the tunnel is gone for good (undefined after close()).
 */
export class Tunnel extends EventEmitter<TunnelEvents> implements SessionTunnel {
  url = '';
  hostname = '';
  id = '';
  readonly bindRequest: BindRequest;
  /** Visitor requests being served right now (a WebSocket counts until its 101). */
  openRequests = 0;
  /** The capture of this tunnel's requests, when forward() was given `inspect`. */
  inspector: Inspector | undefined;
  private ended = false;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly session: AgentSession,
    readonly target: LocalTarget,
    private readonly proxy: OriginProxy,
    request: BindRequest,
  ) {
    super();
    this.bindRequest = { ...request };
  }

  /**
   * Closes the tunnel. Resolves (and emits 'end') once the edge has taken it off, so the
   * hostname serves the offline page as soon as this resolves.
   */
  close(): Promise<void> {
    if (this.ended) return Promise.resolve();
    this.closing ??= (async () => {
      await this.session.release(this);
      await this.proxy.close();
      this.finish(undefined);
    })();
    return this.closing;
  }

  /** Round trip to the edge from the session's heartbeats, ms; undefined while disconnected. */
  get rttMs(): number | undefined {
    return this.session.rttMs;
  }

  /** @internal */
  handleStream(stream: MuxStream | CallbackStream): void {
    this.openRequests++;
    this.proxy.handle(stream);
  }

  /** @internal */
  onBound(bound: Bound): void {
    this.id = bound.tunnelId;
    this.url = bound.url;
    this.hostname = bound.hostname;
    // Reconnects ask for exactly this hostname back, whatever picked it first.
    this.bindRequest.hostname = bound.hostname;
  }

  /** @internal */
  onReconnecting(attempt: number, delayMs: number, reason: string, planned: boolean): void {
    this.emit('reconnecting', { attempt, delayMs, reason, planned });
  }

  /** @internal */
  onRebound(bound: Bound): void {
    this.onBound(bound);
    this.emit('reconnected', bound.url);
  }

  /** @internal */
  onEnded(error: SvcError): void {
    void this.proxy.close();
    this.finish(error);
  }

  private finish(error: SvcError | undefined): void {
    if (this.ended) return;
    this.ended = true;
    this.emit('end', error);
  }
}

/**
 * Exposes a local service through the edge and resolves once the tunnel is live.
 * Rejects with SvcError, whose `code` says what failed and whose message is the sentence to show:
 * TOKEN_INVALID (`invalid or missing svcRouter token`), TUNNEL_LIMIT (`Tunnel limit reached`),
 * BANDWIDTH_LIMIT (`Bandwidth limit reached`), NAME_TAKEN, NAME_INVALID, NAME_RESERVED,
 * DOMAIN_NOT_VERIFIED, EDGE_UNREACHABLE.
 */
export async function forward(options: ForwardOptions): Promise<Tunnel> {
  const target = localTarget(options);
  const session = new AgentSession(dialOptions(options), options.reconnect ?? true);
  await connectWithRetries(session, options.startAttempts);
  return bindOn(session, target, {
    subdomain: options.subdomain ?? envDefault('SVC_SUBDOMAIN'),
    domain: options.domain ?? envDefault('SVC_DOMAIN'),
    hostHeader: options.hostHeader,
    inspect: options.inspect,
  });
}

/**
 * Binds several tunnels over one edge connection (one session), as an agent serving many
 * local services does. The returned tunnels share reconnects.
 */
export async function forwardMany(
  common: Omit<ForwardOptions, 'addr' | 'subdomain' | 'domain'>,
  tunnels: Array<Pick<ForwardOptions, 'addr' | 'proto' | 'subdomain' | 'domain' | 'hostHeader' | 'inspect'>>,
): Promise<Tunnel[]> {
  const session = new AgentSession(dialOptions(common), common.reconnect ?? true);
  // Every address is checked before dialling, so a typo never leaves half the tunnels bound.
  const targets = tunnels.map(localTarget);
  await connectWithRetries(session, common.startAttempts);
  const result: Tunnel[] = [];
  try {
    for (const [index, spec] of tunnels.entries()) result.push(await bindOn(session, targets[index]!, spec));
  } catch (error) {
    // All or nothing: a refused bind releases the tunnels bound before it.
    await Promise.all(result.map((tunnel) => tunnel.close()));
    throw error;
  }
  return result;
}

/** The local target of forward() options; a bad address or proto is NAME_INVALID. */
function localTarget(options: Pick<ForwardOptions, 'addr' | 'proto'>): LocalTarget {
  if (options.proto !== undefined && !isOriginProto(options.proto)) {
    throw new SvcError(ErrorCode.NAME_INVALID, `invalid proto "${String(options.proto)}": expected http1 or h2`);
  }
  const target = parseLocalTarget(options.addr, options.proto);
  if (typeof target === 'string') throw new SvcError(ErrorCode.NAME_INVALID, target);
  return target;
}

/**
 * Connects, retrying an unreachable edge with the reconnect backoff (an edge restarting as the
 * agent starts is common in development). The last failure's message says how many dials it took.
 */
async function connectWithRetries(session: AgentSession, attempts = START_ATTEMPTS): Promise<void> {
  for (let attempt = 1; ; attempt++) {
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
function dialOptions(options: Pick<ForwardOptions, 'token' | 'serverUrl' | 'ca'>): DialOptions {
  const token = options.token ?? envDefault('SVC_TOKEN');
  if (!token) throw new SvcError(ErrorCode.TOKEN_INVALID, Messages.TOKEN_INVALID);
  return { serverUrl: options.serverUrl ?? envDefault('SVC_SERVER') ?? DEFAULT_SERVER_URL, token, ca: options.ca };
}

async function bindOn(
  session: AgentSession,
  target: LocalTarget,
  options: Pick<ForwardOptions, 'subdomain' | 'domain' | 'hostHeader' | 'inspect'>,
): Promise<Tunnel> {
  const request: BindRequest = { local: target.hostPort };
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
  const proxy = new OriginProxy(target, onLog, hostRewrite(options.hostHeader, target), inspector?.tap(inspected));
  tunnel = new Tunnel(session, target, proxy, request);
  tunnel.inspector = inspector;
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
