import { EventEmitter } from 'node:events';
import { ErrorCode, type CallbackStream, type SvcError } from '@svcrouter/protocol';
import type { AgentSession } from './agent-session.js';
import type { BindRequest, Bound, SessionTunnel } from './session-tunnel.js';
import type { Inspector } from './inspector.js';
import type { LocalTarget } from './local-target.js';
import type { OriginProxy, RequestLog } from './origin-proxy.js';
import type { CheckedRoute, RoutedProxy } from './routes.js';
import type { TcpConnectionLog, TcpProxy, TcpTarget } from './tcp-proxy.js';
import { StandbyLink, type StandbyOwner } from './standby-link.js';

// A live tunnel as forward() hands it out: its public state and events, and how it follows
// the sessions that carry it (one, or two on different edge nodes).

/** The events of a Tunnel and their arguments, so listeners are typed. */
export interface TunnelEvents {
  request: [log: RequestLog];
  /** A TCP tunnel's visitor connection closed. */
  connection: [log: TcpConnectionLog];
  reconnecting: [info: { attempt: number; delayMs: number; reason: string; planned: boolean }];
  reconnected: [url: string];
  /** Several edge URLs: the session through `lost` dropped; the other node still serves the tunnel. */
  failover: [info: { lost: string; reason: string; planned: boolean }];
  /** Several edge URLs: the tunnel is held through two nodes again, the new one at `server`. */
  restored: [info: { server: string }];
  end: [error: SvcError | undefined];
}

type Path = 'primary' | 'standby';

/**
 * A live tunnel. Events:
 * - 'request' (RequestLog) after each visitor request completes;
 * - 'connection' (TcpConnectionLog) after each visitor connection of a TCP tunnel closes;
 * - 'reconnecting' ({attempt, delayMs, reason, planned}) when the edge connection was lost;
 *   `planned` when the edge announced it was leaving (a restart), not a failure;
 * - 'reconnected' (url) when the tunnel is live again, under the same hostname;
 * - 'failover' ({lost, reason, planned}) and 'restored' ({server}) with several edge URLs, when
 *   one of its two sessions drops while the other serves on, and when it is replaced;
 * - 'end' (SvcError | undefined) once, when the tunnel is gone for good (undefined after close()).
 */
export class Tunnel extends EventEmitter<TunnelEvents> implements SessionTunnel, StandbyOwner {
  url = '';
  hostname = '';
  id = '';
  readonly bindRequest: BindRequest;
  /** Visitor requests being served right now (a WebSocket counts until its 101). */
  openRequests = 0;
  /** The capture of this tunnel's requests, when forward() was given `inspect`. */
  inspector: Inspector | undefined;
  /** Paths served by other local services than `target` (forward()'s `routes`), longest first; empty: none. */
  routes: readonly CheckedRoute[] = [];
  private ended = false;
  private closing: Promise<void> | undefined;
  /** The same agent's session to a second edge node, when given several URLs. */
  private standby: { session: AgentSession; link: StandbyLink; everUp: boolean } | undefined;
  /** The sessions through which the tunnel is bound right now. */
  private readonly live = new Set<Path>();
  /** Dials since the tunnel was last served through any session. */
  private downAttempts = 0;

  constructor(
    private readonly session: AgentSession,
    /** The local service: an HTTP target, or a TCP tunnel's `host:port`. */
    readonly target: LocalTarget | TcpTarget,
    private readonly proxy: OriginProxy | RoutedProxy | TcpProxy,
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
      await Promise.all([this.session.release(this), this.standby?.session.release(this.standby.link)]);
      await this.proxy.close();
      this.finish(undefined);
    })();
    return this.closing;
  }

  /** Round trip to the edge from the session's heartbeats, ms; undefined while disconnected. */
  get rttMs(): number | undefined {
    return this.session.rttMs ?? this.standby?.session.rttMs;
  }

  /** The edge URLs the tunnel is bound through right now (two with several URLs, while both live). */
  get servers(): string[] {
    const servers: string[] = [];
    if (this.live.has('primary')) servers.push(this.session.serverUrl);
    if (this.standby && this.live.has('standby')) servers.push(this.standby.session.serverUrl);
    return servers;
  }

  /**
   * @internal Holds the tunnel through `session` too, under the hostname bound already. A tunnel
   * added to a running agent (`bindNow`) is bound on a connected second session at once; otherwise
   * the session binds it when it next connects.
   */
  attachStandby(session: AgentSession, bindNow = false): void {
    const link = new StandbyLink(this);
    this.standby = { session, link, everUp: false };
    session.adopt(link);
    if (!bindNow || !session.isConnected) return;
    session.bind(this.bindRequest, link).then(
      (bound) => link.onRebound(bound),
      (error: unknown) => {
        // A connection lost mid-bind rebinds everything it carries once back.
        if (error instanceof Error && (error as SvcError).code === ErrorCode.SESSION_CLOSED) return;
        void session.release(link);
        link.onEnded(error as SvcError);
      },
    );
  }

  /** @internal */
  handleStream(stream: CallbackStream): void {
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
    this.live.add('primary');
  }

  /** @internal */
  onReconnecting(attempt: number, delayMs: number, reason: string, planned: boolean): void {
    this.pathDown('primary', attempt, delayMs, reason, planned);
  }

  /** @internal */
  onRebound(bound: Bound): void {
    this.onBound(bound);
    this.live.delete('primary');
    this.pathUp('primary', bound.url);
  }

  /** @internal */
  onEnded(error: SvcError): void {
    void this.proxy.close();
    if (this.standby) void this.standby.session.release(this.standby.link);
    this.finish(error);
  }

  /** @internal One session lost its node; the tunnel is down only when no session holds it. */
  pathDown(path: Path, attempt: number, delayMs: number, reason: string, planned: boolean): void {
    const wasLive = this.live.delete(path);
    if (this.live.size > 0) {
      if (wasLive) this.emit('failover', { lost: this.sessionOf(path).serverUrl, reason, planned });
      return;
    }
    this.downAttempts++;
    this.emit('reconnecting', { attempt: this.downAttempts, delayMs, reason, planned });
  }

  /** @internal A session (re)bound the tunnel. */
  pathUp(path: Path, url: string): void {
    const wasDown = this.live.size === 0;
    this.live.add(path);
    const firstStandby = path === 'standby' && this.standby !== undefined && !this.standby.everUp;
    if (path === 'standby' && this.standby) this.standby.everUp = true;
    if (wasDown) {
      this.downAttempts = 0;
      this.emit('reconnected', url);
    } else if (!firstStandby) {
      this.emit('restored', { server: this.sessionOf(path).serverUrl });
    }
  }

  /**
   * @internal The second connection's binding ended. Released by the server or a revoked token
   * ends the tunnel as on the first connection; anything else (the node refused the second
   * connection) leaves the tunnel on its first connection alone.
   */
  standbyEnded(error: SvcError): void {
    if (!this.standby || this.ended) return;
    const fatal = error.code === ErrorCode.TUNNEL_RELEASED || error.code === ErrorCode.TOKEN_INVALID;
    const wasLive = this.live.delete('standby');
    const lost = this.standby.session.serverUrl;
    this.standby = undefined;
    if (fatal) {
      void this.session.release(this);
      this.onEnded(error);
    } else if (wasLive || this.live.size > 0) {
      this.emit('failover', { lost, reason: error.message, planned: false });
    }
  }

  private sessionOf(path: Path): AgentSession {
    return path === 'standby' && this.standby ? this.standby.session : this.session;
  }

  private finish(error: SvcError | undefined): void {
    if (this.ended) return;
    this.ended = true;
    this.emit('end', error);
  }
}
