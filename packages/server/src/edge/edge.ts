import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ErrorCode, peerHasRead, SESSION_PATH, type ErrorCodeValue } from '@svcrouter/protocol';
import { ACME_CHALLENGE_PATH } from '../certs/index.js';
import { answerAcmeChallenge } from './acme-answer.js';
import { endAwayTunnel, endRefusedReturn, type AwayParts } from './away-tunnels.js';
import { Binder } from './binder.js';
import { Holds, heldRequestBytes } from './hold.js';
import type { EdgeSession, UnbindReason } from './edge-session.js';
import { isIpHost, normalizeHost } from './host.js';
import { LeanVisitor } from './lean/lean-proxy.js';
import type { LeanRequest } from './lean/request-head.js';
import type { LeanHandler, VisitorConnection } from './lean/visitor-connection.js';
import { expectsContinue } from './interim.js';
import { headerListBytes, MAX_HEADER_BYTES } from './limits.js';
import { badRequestPage, bandwidthPage, headTooLargePage, offlinePage, rawResponse, type EdgePage } from './pages.js';
import { admitExchange } from './access-verdict.js';
import { EdgeExchange, type ExchangeDeps } from './exchange.js';
import type { Fleet, LiveBinding } from './fleet.js';
import { pickMember } from './pool.js';
import { NodeVisitor, sendPage } from './proxy.js';
import { Router, type Binding } from './router.js';
import {
  AuthorityRefusal,
  BAD_TARGET_REASON,
  isPrintableTarget,
  isOriginForm,
  parseAbsoluteTarget,
  routingAuthority,
  type AbsoluteTarget,
} from './request-target.js';
import { acceptSession, clientIp, isSessionUpgrade } from './session-acceptor.js';
import { LocalRateLimiter } from '../policy/index.js';
import { passOn, type TrafficVisitor } from './traffic-step.js';
import { UpgradeVisitor } from './upgrade.js';
import { SessionLimits } from './session-limits.js';
import { TcpTunnels } from './tcp/tcp-tunnels.js';
import { TlsPassthrough } from './tls/tls-passthrough.js';
import type { EdgeDeps, VisitorRequest, VisitorResponse } from './edge-deps.js';

export type { ApexHandler, EdgeDeps } from './edge-deps.js';

/**
 * The edge: routes visitors by Host to live bindings, accepts agent sessions, and owns the
 * in-memory routing state of this node. Listeners (HTTP, HTTPS) hand it requests.
 *
 * Host routing order: ACME HTTP-01 answers (plain HTTP only) → apex → live binding → offline
 * page. The host is the absolute-form target's, else `:authority`, else the single Host
 * (request-target.ts); it is lower-cased, the port and a trailing dot dropped, before any lookup.
 */
export class Edge implements LeanHandler, Fleet {
  readonly router = new Router();
  readonly sessions = new Set<EdgeSession>();
  readonly sessionLimits: SessionLimits;
  private readonly binder: Binder;
  private readonly holds: Holds;
  /** What ending a tunnel whose agent is away touches (away-tunnels.ts). */
  private readonly away: AwayParts;
  private readonly exchanges: ExchangeDeps;
  /** TCP tunnels' ports and listeners; undefined when SVC_TCP_PORTS is off. */
  readonly tcp: TcpTunnels | undefined;
  /** TLS passthrough tunnels' connections, taken off the HTTPS port by SNI while any is bound. */
  readonly tlsPassthrough: TlsPassthrough;

  constructor(private readonly deps: EdgeDeps) {
    this.tlsPassthrough = new TlsPassthrough({
      router: this.router,
      observe: deps.observe ?? (() => undefined),
      meter: deps.meter,
      ...(deps.remoteBinding ? { remoteBinding: (host: string) => deps.remoteBinding!(host) } : {}),
      ...(deps.remoteTlsCount ? { remoteTlsCount: () => deps.remoteTlsCount!() } : {}),
      ...(deps.isOverBandwidth ? { isOverBandwidth: (accountId: string) => deps.isOverBandwidth!(accountId) } : {}),
    });
    this.tcp = deps.tcpPorts
      ? new TcpTunnels({
          store: deps.store,
          router: this.router,
          range: deps.tcpPorts,
          host: deps.tcpHost ?? '::',
          sharedDomain: deps.sharedDomain,
          nodeId: deps.nodeId,
          graceMs: deps.nameGraceMs ?? 0,
          log: deps.log,
          observe: deps.observe ?? (() => undefined),
          meter: deps.meter,
          ...(deps.remoteBinding ? { remoteBinding: (hostname: string) => deps.remoteBinding!(hostname) } : {}),
        })
      : undefined;
    const rateLimiter = deps.rateLimiter ?? new LocalRateLimiter();
    this.binder = new Binder({ ...deps, rateLimiter, router: this.router, ...(this.tcp ? { tcp: this.tcp } : {}) });
    this.sessionLimits = new SessionLimits(deps.sessionLimits ?? { perNode: Infinity, perAccount: Infinity });
    this.holds = new Holds({
      holdMs: deps.holdMs ?? 0,
      onError: (error) => deps.log.error({ err: error }, 'a held request failed to start'),
    });
    this.exchanges = { observe: deps.observe ?? (() => undefined), meter: deps.meter };
    this.away = { binder: this.binder, holds: this.holds, tcp: this.tcp };
  }

  /** Whether a normalised host is the apex (API and dashboard), not a tunnel. */
  isApex(host: string): boolean {
    return host === this.deps.sharedDomain || isIpHost(host);
  }

  /** Handles one visitor request (HTTP/1.1 or HTTP/2). */
  handleRequest(req: VisitorRequest, res: VisitorResponse, secure: boolean): void {
    // HTTP/1.1 heads are limited by Node's parser; HTTP/2's are counted here, by the same limit.
    if (req.httpVersionMajor === 2 && headerListBytes(req.rawHeaders) > MAX_HEADER_BYTES) {
      sendPage(res, headTooLargePage(MAX_HEADER_BYTES));
      return;
    }
    const url = req.url ?? '';
    // HTTP/1.1's parser refuses a target with a byte outside printable ASCII; nghttp2 lets 0x80-0xff
    // through in :path, and the same request must not fare differently by protocol.
    if (req.httpVersionMajor === 2 && !isPrintableTarget(url)) {
      sendPage(res, badRequestPage(BAD_TARGET_REASON));
      return;
    }
    let absolute: AbsoluteTarget | undefined;
    if (!isOriginForm(url)) {
      // HTTP/2's :path is origin-form (or `*`); only HTTP/1.x has an absolute form to accept.
      absolute = req.httpVersionMajor === 1 ? parseAbsoluteTarget(url) : undefined;
      if (!absolute) {
        sendPage(res, badRequestPage(BAD_TARGET_REASON));
        return;
      }
    }
    const authority = routingAuthority(req.rawHeaders, absolute);
    if (authority instanceof AuthorityRefusal) {
      sendPage(res, badRequestPage(authority.reason));
      return;
    }
    const host = normalizeHost(authority);
    if (!host) {
      sendPage(res, badRequestPage('A Host header is required.'));
      return;
    }
    if (!secure && answerAcmeChallenge(this.deps.acmeChallenge, req, res, () => this.route(req, res, host, absolute, secure))) return;
    this.route(req, res, host, absolute, secure);
  }

  private route(req: VisitorRequest, res: VisitorResponse, host: string, absolute: AbsoluteTarget | undefined, secure: boolean): void {
    if (this.isApex(host)) {
      // The API reads whole bodies: the visitor may send at once (Node's default answer).
      if (expectsContinue(req)) (res as ServerResponse).writeContinue();
      return this.deps.apex(req, res);
    }
    const exchange = this.newExchange(req, host, secure, absolute);
    const visitor = new NodeVisitor(exchange, req, res);
    const gone = (): void => leave?.();
    // A held request's body is not read: Node stops reading the visitor once its buffer is full.
    const leave = this.dispatch(exchange, req.rawHeaders, heldRequestBytes(req), visitor, () => res.off('close', gone));
    if (leave) res.once('close', gone);
  }

  /**
   * Handles a body-less HTTP/1.1 request read by the lean path (lean/visitor-connection.ts), with
   * the same routing as `handleRequest`. Requests for the apex, ACME challenges and unroutable
   * hosts answer false, so Node's server takes them, and everything after them, the usual way.
   */
  serveLean(connection: VisitorConnection, request: LeanRequest): boolean {
    const host = normalizeHost(request.host);
    if (!host || this.isApex(host)) return false;
    if (!connection.secure && this.deps.acmeChallenge && request.target.startsWith(ACME_CHALLENGE_PATH)) return false;
    const exchange = new EdgeExchange(
      {
        host,
        method: request.method,
        path: request.target,
        ip: connection.ip,
        userAgent: request.userAgent,
        proto: 'HTTP/1.1',
        secure: connection.secure,
        absolute: undefined,
      },
      this.exchanges,
    );
    const visitor = new LeanVisitor(exchange, connection, request);
    const leave = this.dispatch(exchange, request.rawHeaders, headerListBytes(request.rawHeaders), visitor);
    if (leave) connection.adopt({ onVisitorDrain: () => undefined, onVisitorGone: leave });
    return true;
  }

  /** Handles an HTTP/1.1 `Upgrade` request: an agent session on the apex, or a visitor's. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, secure: boolean): void {
    socket.on('error', () => socket.destroy());
    const url = req.url ?? '';
    let absolute: AbsoluteTarget | undefined;
    if (!isOriginForm(url)) {
      absolute = parseAbsoluteTarget(url);
      if (!absolute) {
        socket.end(rawResponse(badRequestPage(BAD_TARGET_REASON)));
        return;
      }
    }
    const authority = routingAuthority(req.rawHeaders, absolute);
    if (authority instanceof AuthorityRefusal) {
      socket.end(rawResponse(badRequestPage(authority.reason)));
      return;
    }
    const host = normalizeHost(authority);
    if (!host) {
      socket.end(rawResponse(badRequestPage('A Host header is required.')));
      return;
    }
    if (this.isApex(host)) {
      const path = (req.url ?? '').split('?')[0];
      if (path === SESSION_PATH && isSessionUpgrade(req)) {
        void acceptSession(req, socket, head, {
          authenticate: this.deps.authenticate,
          handlers: {
            bind: (session, message) =>
              this.binder.bind(session, message).catch((error: unknown) => {
                const lost = endRefusedReturn(this.away, session.accountId, message, error);
                if (lost) this.deps.log.info({ tunnelId: lost.tunnelId, hostname: lost.hostname }, 'grace ended: the return was refused');
                throw error;
              }),
            unbind: (session, binding, reason) => this.unbind(binding, reason),
            bound: (binding) => this.deliverHeld(binding),
          },
          heartbeatMs: this.deps.heartbeatMs,
          limits: this.sessionLimits,
          log: this.deps.log,
          onOpen: (session) => this.sessions.add(session),
          onClose: (session) => this.sessions.delete(session),
        });
        return;
      }
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    const exchange = this.newExchange(req, host, secure, absolute);
    const visitor = new UpgradeVisitor(exchange, req, socket, head);
    const gone = (): void => leave?.();
    // Nothing reads the socket while the request is held (Node leaves an upgraded socket paused).
    const bytes = headerListBytes(req.rawHeaders) + head.length;
    const leave = this.dispatch(exchange, req.rawHeaders, bytes, visitor, () => socket.off('close', gone));
    if (leave) socket.once('close', gone);
  }

  /**
   * Releases a tunnel deleted through the API: the agent is told (it prints a line and exits),
   * and the hostname is free at once. A tunnel whose agent is away (its name in its grace
   * period) loses the grace, and the requests held for it get the offline page now. Returns
   * whether a live binding was found on this node.
   */
  releaseTunnel(tunnelId: string, reason: string): boolean {
    const binding = this.router.byTunnelId(tunnelId);
    if (!binding) {
      endAwayTunnel(this.away, tunnelId);
      return false;
    }
    binding.session.release(tunnelId, ErrorCode.TUNNEL_RELEASED, reason);
    this.router.remove(binding);
    this.tcp?.unbound(binding, true);
    this.binder.released(binding);
    return true;
  }

  /**
   * Ends every session authenticated with a revoked key, and the grace of names whose agent was
   * away with it: their held requests get the offline page now. Returns how many sessions.
   */
  dropSessionsOfKey(keyId: string, message: string): number {
    for (const binding of this.binder.endGracesOfKey(keyId)) {
      this.holds.expire(binding.hostname);
      this.tcp?.unbound(binding, true);
    }
    let dropped = 0;
    for (const session of this.sessions) {
      if (session.keyId !== keyId) continue;
      session.fatal(ErrorCode.TOKEN_INVALID, message);
      dropped++;
    }
    return dropped;
  }

  /**
   * Ends a tunnel on purpose, its agent told why (an account's plan lowered below its tunnel
   * count, plan-watch.ts): the name is free at once and visitors get the offline page, no hold.
   * One whose agent is away loses its grace, and the visitors held for it get the page now.
   * Returns whether this node held it (live or in its grace).
   */
  endTunnel(tunnelId: string, code: ErrorCodeValue, message: string): boolean {
    const binding = this.router.byTunnelId(tunnelId);
    if (!binding) return endAwayTunnel(this.away, tunnelId) !== undefined;
    if (binding.session.release(tunnelId, code, message) === undefined) return false;
    this.unbind(binding, 'ended');
    return true;
  }

  /** The lost bindings of this node whose names are in their grace period (counted as tunnels by plan-watch.ts). */
  graceBindings(): Binding[] {
    return this.binder.graceBindings();
  }

  /** Live tunnel count of an account on this node. */
  liveTunnels(accountId: string): number {
    return this.router.countForAccount(accountId);
  }

  /** Whether a tunnel is live on this node. */
  isLive(tunnelId: string): boolean {
    return this.router.byTunnelId(tunnelId) !== undefined;
  }

  /** An account's live bindings on this node. */
  *liveBindings(accountId: string): Generator<LiveBinding> {
    for (const session of this.sessions) if (session.accountId === accountId) yield* session.bindings.values();
  }

  /** A node alone has no other node to tell: its own certificates are forgotten by the removal itself. */
  forgetCertificates(): void {}

  /**
   * Closes every agent session (server shutdown); agents will reconnect elsewhere or later.
   * Resolves once their tunnels are recorded offline, so the store can be closed after it.
   */
  async close(): Promise<void> {
    this.holds.close();
    // Ended on purpose: no name is kept for a reconnect to a node that is going away.
    for (const session of this.sessions) session.end('server shutting down');
    // Responses still in flight are cut now, each as its visitor's protocol says it: a StreamDuplex
    // reports its reset on the next tick, and HTTP/2 writes the RST_STREAM from an immediate.
    // Two turns let those leave before the listeners destroy the visitors' connections, which
    // would otherwise end an HTTP/2 stream without its error code.
    for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
    await this.binder.idle();
    await this.tcp?.close();
  }

  private unbind(binding: Binding, reason: UnbindReason): void {
    // Off the router at once; the store write is ordered against binds of the same name (Binder).
    this.binder.unbind(binding, reason);
    const clean = reason !== 'lost';
    this.tcp?.unbound(binding, clean);
    this.deps.log.info({ tunnelId: binding.tunnelId, hostname: binding.hostname, clean, reason }, 'tunnel unbound');
  }

  private newExchange(req: VisitorRequest, host: string, secure: boolean, absolute: AbsoluteTarget | undefined): EdgeExchange {
    const userAgent = req.headers['user-agent'];
    return new EdgeExchange(
      {
        host,
        method: req.method ?? 'GET',
        path: absolute?.path ?? req.url ?? '/',
        ip: clientIp(req),
        userAgent: typeof userAgent === 'string' ? userAgent : '',
        proto: `HTTP/${req.httpVersion}`,
        secure,
        absolute,
      },
      this.exchanges,
    );
  }

  /**
   * Records on the exchange the live binding its host routes to (this node's, else one that
   * carries it to the node holding the agent), and answers true; false when there is none (no
   * live agent) or its account is over the transfer quota (the binding is recorded then).
   */
  private tunnelFor(exchange: EdgeExchange): boolean {
    let binding = this.router.resolve(exchange.host);
    if (binding?.pool !== undefined) binding = pickMember(binding.pool);
    if (!binding && this.deps.remoteBinding) binding = this.deps.remoteBinding(exchange.host);
    // A TLS passthrough tunnel's name serves no HTTP: its visitors speak TLS to the local service.
    if (!binding || binding.session.isClosed || binding.proto === 'tls') return false;
    exchange.binding = binding;
    return this.deps.isOverBandwidth?.(binding.accountId) !== true;
  }

  /**
   * Holds a request that found no live binding, when its name is in its grace period (its agent
   * lost its connection and may be reconnecting): `proceed` runs once, later, with whether the
   * exchange now has a live binding to proxy to (false: refuse it as before). Answers what to call when the visitor leaves
   * meanwhile (the request leaves the queue and is recorded), or undefined when the request is
   * not held: refuse it now. A request over its account's quota is never held.
   */
  private hold(exchange: EdgeExchange, bytes: number, proceed: (live: boolean) => void): (() => void) | undefined {
    if (exchange.binding) return undefined;
    const grace = this.binder.graceOf(exchange.host);
    if (!grace) return undefined;
    const cancel = this.holds.hold(exchange.host, grace.accountId, grace.until, bytes, {
      deliver: () => proceed(this.tunnelFor(exchange)),
      expire: () => proceed(false),
    });
    if (!cancel) return undefined;
    const log = this.deps.log;
    log.info({ hostname: exchange.host, held: this.holds.count(exchange.host) }, 'request held for a reconnect');
    return () => {
      if (!cancel()) return;
      exchange.finish();
      log.info({ hostname: exchange.host, held: this.holds.count(exchange.host) }, 'held request dropped: the visitor left');
    };
  }

  /**
   * A name is bound again and its agent was told: requests held for it go to the new binding once
   * the agent has read that. An agent takes a tunnel on a moment after reading 'bound' (in a
   * promise continuation), so a stream read in the same chunk would find no tunnel there; a PING
   * sent now is answered only after 'bound' was read, and its answer's streams arrive later still.
   * The requests stay held (to their deadline) if the session ends first.
   */
  private deliverHeld(binding: Binding): void {
    if (this.holds.count(binding.hostname) === 0) return;
    void peerHasRead(binding.session.mux).then((read) => {
      if (!read) return;
      const delivered = this.holds.release(binding);
      if (delivered > 0) this.deps.log.info({ hostname: binding.hostname, delivered }, 'held requests delivered');
    });
  }

  /** The page for a request `tunnelFor` refused: offline (no live agent), or over the transfer quota. */
  private refusal(exchange: EdgeExchange): EdgePage {
    return exchange.binding ? bandwidthPage() : offlinePage(exchange.host);
  }

  /**
   * Routes the exchange: `forward` runs now when its host has a live binding, or later when the
   * request is held for a reconnecting agent and that agent comes back; otherwise the exchange is
   * refused (offline or quota page), now or when the hold expires. `settled` runs when a held
   * request leaves the queue either way. Answers what to call when the visitor leaves while
   * held, or undefined when the request was not held.
   */
  private dispatch(
    exchange: EdgeExchange,
    rawHeaders: readonly string[],
    bytes: number,
    visitor: TrafficVisitor,
    settled?: () => void,
  ): (() => void) | undefined {
    if (this.tunnelFor(exchange)) return this.admit(exchange, rawHeaders, visitor, settled);
    const proceed = (live: boolean): void => {
      settled?.();
      if (live) this.admit(exchange, rawHeaders, visitor, undefined);
      else exchange.refuse(this.refusal(exchange));
    };
    const leave = this.hold(exchange, bytes, proceed);
    if (!leave) proceed(false);
    return leave;
  }

  /** Passes the exchange on, after its tunnel's access rules when it has any (access-verdict.ts). */
  private admit(
    exchange: EdgeExchange,
    rawHeaders: readonly string[],
    visitor: TrafficVisitor,
    settled: (() => void) | undefined,
  ): (() => void) | undefined {
    const access = exchange.binding!.access;
    if (access === undefined) return this.pass(exchange, rawHeaders, visitor);
    return admitExchange(exchange, access, rawHeaders, visitor, this.deps.verifyWebhook, settled);
  }

  private pass(exchange: EdgeExchange, rawHeaders: readonly string[], visitor: TrafficVisitor): (() => void) | undefined {
    return passOn(exchange, rawHeaders, visitor, this.deps.verifyWebhook);
  }
}
