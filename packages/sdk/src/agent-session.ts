import { EventEmitter, once } from 'node:events';
import type { Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import {
  BindMessages,
  ErrorCode,
  FEATURE_TRAILERS,
  Feature,
  HEARTBEAT_INTERVAL_MS,
  HEARTBEAT_MISSES,
  Mux,
  SvcError,
  type AgentMessage,
  type CallbackStream,
  type EdgeMessage,
  isErrorCode,
  peerHasRead,
  type RequestHead,
} from '@svcrouter/protocol';
import { dialEdge, type DialOptions } from './dial.js';
import type { BindRequest, Bound, SessionTunnel } from './session-tunnel.js';
import { PLANNED_RECONNECT_CAP_MS, reconnectDelay } from './backoff.js';

/** How long a clean close waits for the edge to acknowledge (close its side) before giving up. */
export const CLOSE_ACK_TIMEOUT_MS = 3000;
/** A connection that lived this long resets the reconnect backoff; shorter ones keep climbing it. */
export const STABLE_CONNECTION_MS = 30_000;
/**
 * After a leaving node's tunnels are bound on another node, how long the old session keeps them
 * before unbinding: the other nodes learn of the new claim first (they prefer the newest), so
 * none sends a visitor to the old node in the moment its claim disappears.
 */
export const MOVE_LINGER_MS = 1000;

/**
 * A bind awaiting its answer. `tunnel` is registered under the new id as the answer is read, before
 * the promise settles: the edge may send the first visitor's stream right behind its 'bound'.
 */
type PendingBind = { resolve: (bound: Bound) => void; reject: (error: Error) => void; tunnel: SessionTunnel; adding: boolean };

/**
 * One connection from an agent process to the edge, carrying any number of tunnels.
 * It re-dials with capped exponential backoff and jitter when the connection is lost and
 * rebinds every tunnel under its previous hostname. Long-lived state, hence a class.
 *
 * Tunnels are tracked by object, not by the id the edge gave them: ids change on every rebind,
 * and a tunnel between two connections has none. Events: 'closed' once, when the session stops.
 */
export class AgentSession extends EventEmitter {
  private mux: Mux | undefined;
  private socket: Socket | undefined;
  /** Every tunnel on the session, live or waiting to be rebound. */
  private readonly tunnels = new Set<SessionTunnel>();
  /** Live tunnels by edge id, for routing streams and releases; emptied when the connection drops. */
  private readonly byId = new Map<string, SessionTunnel>();
  private readonly idOf = new Map<SessionTunnel, string>();
  private readonly pendingBinds = new Map<number, PendingBind>();
  private nextRequestId = 1;
  private closing = false;
  private reconnecting = false;
  private closed: Promise<void> | undefined;
  /** Backoff step of the next reconnect; reset only by a connection that proved stable. */
  private backoffStep = 0;
  private connectedAt = 0;
  /** Optional features the edge listed on its 101 (Feature values). */
  private edgeFeatures: ReadonlySet<string> = new Set();
  private goawayReason: string | undefined;
  /** The edge's 'leaving' sentence on the current connection: its loss is a planned restart. */
  private leavingReason: string | undefined;

  /**
   * Picks the edge URL of the next dial after a lost connection (several SVC_SERVER URLs);
   * without it the session dials the same URL again.
   */
  chooseServer: ((current: string) => string) | undefined;
  /** The other session of the pair (several SVC_SERVER URLs), which holds the same tunnels on another node. */
  partner: AgentSession | undefined;
  /** The connection to a leaving node while its tunnels move to another (see moveAway). */
  private leftBehind: Mux | undefined;

  constructor(
    private dial: DialOptions,
    private readonly reconnect = true,
  ) {
    super();
  }

  /** The edge URL this session dials (and, while connected, is connected to). */
  get serverUrl(): string {
    return this.dial.serverUrl;
  }

  /** Whether the session is connected right now. */
  get isConnected(): boolean {
    return this.mux?.isClosed === false;
  }

  /** Dials `serverUrl` from now on (a start that tries each URL in turn). */
  useServer(serverUrl: string): void {
    this.dial = { ...this.dial, serverUrl };
  }

  /**
   * Carries `tunnel` from the next connection on, bound with its `bindRequest` then; with
   * startInBackground, a session that never blocks its caller (a second edge node's).
   */
  adopt(tunnel: SessionTunnel): void {
    this.tunnels.add(tunnel);
  }

  /** Dials and binds the adopted tunnels in the background, retrying with backoff as after a lost connection. */
  startInBackground(): void {
    if (this.reconnecting || this.closing) return;
    void this.reconnectLoop('not connected yet', false, true);
  }

  /** Round trip to the edge measured by the last answered heartbeat, ms; undefined before the first or while disconnected. */
  get rttMs(): number | undefined {
    return this.mux?.isClosed === false ? this.mux.lastPingRttMs : undefined;
  }

  /** Number of tunnels on this session. */
  get tunnelCount(): number {
    return this.tunnels.size;
  }

  /** Dials the edge; rejects with SvcError TOKEN_INVALID for a bad token. */
  async connect(): Promise<void> {
    const { socket, features } = await dialEdge(this.dial);
    const mux = new Mux(socket, {
      role: 'dialer',
      peerTrailers: features.has(FEATURE_TRAILERS),
      onStream: (stream) => this.onStream(stream),
      onControl: (message) => this.onControl(message as EdgeMessage),
    });
    this.mux = mux;
    this.socket = socket;
    this.edgeFeatures = features;
    this.connectedAt = Date.now();
    this.goawayReason = undefined;
    this.leavingReason = undefined;
    mux.on('goaway', (reason: string) => (this.goawayReason = reason || undefined));
    const interval = this.dial.heartbeatMs ?? HEARTBEAT_INTERVAL_MS;
    mux.startHeartbeat(interval, interval * HEARTBEAT_MISSES);
    mux.once('close', (error?: Error) => this.onDisconnect(mux, error));
  }

  /** Binds a tunnel on this session; rejects with SvcError (limit, name taken…). */
  async bind(request: BindRequest, tunnel: SessionTunnel): Promise<Bound> {
    const bound = await this.sendBind(request, tunnel, true);
    this.tunnels.add(tunnel);
    this.register(tunnel, bound.tunnelId);
    return bound;
  }

  /**
   * Releases one tunnel; closes the session when it was the last one. Resolves once the edge
   * has taken the tunnel off (see close()), so the hostname is offline when this resolves.
   */
  async release(tunnel: SessionTunnel): Promise<void> {
    if (!this.tunnels.delete(tunnel)) return;
    const id = this.unregister(tunnel);
    const mux = this.mux;
    if (id !== undefined && mux && !mux.isClosed) {
      mux.sendControl({ type: 'unbind', tunnelId: id } satisfies AgentMessage);
      // The edge takes a binding off its router as it reads the unbind; until then a visitor
      // may still be routed here, to a tunnel this side has forgotten (a 502, not the offline
      // page). The last tunnel's release waits for the close below instead.
      if (this.tunnels.size > 0) await peerHasRead(mux, CLOSE_ACK_TIMEOUT_MS);
    }
    if (this.tunnels.size === 0) await this.close();
  }

  /**
   * Closes the connection and stops reconnecting. Resolves when the edge has closed its side
   * too (or after CLOSE_ACK_TIMEOUT_MS): the edge reads frames in order, so by the time its
   * FIN arrives it has processed every unbind sent before ours.
   */
  close(): Promise<void> {
    this.closed ??= this.closeNow();
    return this.closed;
  }

  private async closeNow(): Promise<void> {
    this.closing = true;
    // A leaving node's connection the tunnels moved away from: nothing left on it to wait for.
    this.leftBehind?.close('agent closing');
    const { mux, socket } = this;
    if (mux && !mux.isClosed && socket && !socket.destroyed) {
      const acknowledged = waitForClose(socket, CLOSE_ACK_TIMEOUT_MS);
      mux.close('agent closing');
      await acknowledged;
    } else {
      mux?.destroy();
    }
    this.emit('closed');
  }

  private register(tunnel: SessionTunnel, id: string): void {
    this.byId.set(id, tunnel);
    this.idOf.set(tunnel, id);
  }

  private unregister(tunnel: SessionTunnel): string | undefined {
    const id = this.idOf.get(tunnel);
    this.idOf.delete(tunnel);
    if (id !== undefined && this.byId.get(id) === tunnel) this.byId.delete(id);
    return id;
  }

  private sendBind(request: BindRequest, tunnel: SessionTunnel, adding: boolean): Promise<Bound> {
    const mux = this.mux;
    if (!mux || mux.isClosed) return Promise.reject(new SvcError(ErrorCode.SESSION_CLOSED, 'not connected to the edge'));
    // An edge that would ignore the rules never gets the tunnel: it would serve it unprotected.
    if (request.policy !== undefined && !this.edgeFeatures.has(Feature.POLICY)) {
      return Promise.reject(new SvcError(ErrorCode.POLICY_INVALID, BindMessages.policyUnsupported));
    }
    if (request.pool === true && !this.edgeFeatures.has(Feature.POOL)) {
      return Promise.reject(new SvcError(ErrorCode.PROTOCOL, BindMessages.poolUnsupported));
    }
    if (request.policy?.oidc !== undefined && !this.edgeFeatures.has(Feature.OIDC)) {
      return Promise.reject(new SvcError(ErrorCode.POLICY_INVALID, BindMessages.oidcUnsupported));
    }
    const requestId = this.nextRequestId++;
    return new Promise((resolve, reject) => {
      this.pendingBinds.set(requestId, { resolve, reject, tunnel, adding });
      mux.sendControl({ type: 'bind', requestId, ...request } satisfies AgentMessage);
    });
  }

  private onStream(stream: CallbackStream): void {
    const head = stream.meta as RequestHead;
    const tunnel = this.byId.get(head.t);
    if (!tunnel) {
      stream.reset('NOT_FOUND');
      return;
    }
    tunnel.handleStream(stream);
  }

  private onControl(message: EdgeMessage): void {
    switch (message.type) {
      case 'hello': {
        // Follow the edge's heartbeat interval (SVC_HEARTBEAT_MS) so both sides agree on
        // how soon a dead connection is noticed; the built-in default applies until then.
        const interval = message.heartbeatMs;
        if (Number.isInteger(interval) && interval >= 50 && interval <= 60_000) {
          this.mux?.startHeartbeat(interval, interval * HEARTBEAT_MISSES);
        }
        return;
      }
      case 'bound':
      case 'bindError': {
        const pending = this.pendingBinds.get(message.requestId);
        if (!pending) return;
        this.pendingBinds.delete(message.requestId);
        if (message.type === 'bound' && (pending.adding || this.tunnels.has(pending.tunnel)))
          this.register(pending.tunnel, message.tunnelId);
        if (message.type === 'bound') pending.resolve(message);
        else pending.reject(edgeError(message));
        return;
      }
      case 'released': {
        const tunnel = this.byId.get(message.tunnelId);
        if (!tunnel) return;
        this.unregister(tunnel);
        this.tunnels.delete(tunnel);
        tunnel.onEnded(edgeError(message));
        if (this.tunnels.size === 0) void this.close();
        return;
      }
      case 'leaving':
        this.leavingReason = typeof message.message === 'string' && message.message !== '' ? message.message : 'the edge is restarting';
        if (this.chooseServer && this.mux) void this.moveAway(this.mux, this.leavingReason);
        return;
      case 'fatal':
        this.fail(edgeError(message));
        return;
      default:
        return;
    }
  }

  /** Ends every tunnel with `error` and stops for good. */
  private fail(error: SvcError): void {
    this.closing = true;
    const tunnels = [...this.tunnels];
    this.tunnels.clear();
    this.byId.clear();
    this.idOf.clear();
    for (const tunnel of tunnels) tunnel.onEnded(error);
    this.mux?.destroy();
    this.closed ??= Promise.resolve();
    this.emit('closed');
  }

  private onDisconnect(mux: Mux, error?: Error): void {
    if (this.mux !== mux) return;
    for (const pending of this.pendingBinds.values()) {
      pending.reject(new SvcError(ErrorCode.SESSION_CLOSED, 'connection to the edge lost'));
    }
    this.pendingBinds.clear();
    // Ids belong to the lost connection; the rebind hands out new ones.
    this.byId.clear();
    this.idOf.clear();
    const planned = this.leavingReason !== undefined;
    // A planned restart says nothing about this agent's connection: start again from the first step.
    if (planned || Date.now() - this.connectedAt >= STABLE_CONNECTION_MS) this.backoffStep = 0;
    if (this.closing || this.reconnecting || this.tunnels.size === 0) return;
    const reason = this.leavingReason ?? error?.message ?? this.goawayReason ?? 'connection closed';
    if (!this.reconnect) {
      this.fail(new SvcError(ErrorCode.SESSION_CLOSED, `connection to the edge lost: ${reason}`));
      return;
    }
    void this.reconnectLoop(reason, planned);
  }

  /**
   * One episode of lost connection: dial with backoff until the edge answers, then rebind.
   * Only one loop runs at a time (`reconnecting`); a loss during the rebind goes round again.
   */
  private async reconnectLoop(firstReason: string, planned: boolean, dialFirst = false): Promise<void> {
    this.reconnecting = true;
    let reason = firstReason;
    try {
      for (let attempt = 1; !this.closing && this.tunnels.size > 0; attempt++) {
        if (dialFirst && attempt === 1) {
          if (await this.dialAndRebind()) return;
          reason = this.lastDialError ?? reason;
          continue;
        }
        // After a planned restart the edge is expected back soon: dial often enough to be there
        // as it returns, with the jitter kept so a fleet of agents does not arrive in lock-step.
        const backoff = reconnectDelay(this.backoffStep++);
        const wait = planned ? Math.min(backoff, PLANNED_RECONNECT_CAP_MS) : backoff;
        for (const tunnel of this.tunnels) tunnel.onReconnecting(attempt, wait, reason, planned);
        await delay(wait);
        if (this.closing) return;
        if (this.chooseServer) this.useServer(this.chooseServer(this.dial.serverUrl));
        const done = await this.dialAndRebind();
        if (done) return;
        reason = this.lastDialError ?? 'connection lost while rebinding';
      }
    } finally {
      this.reconnecting = false;
    }
  }

  private lastDialError: string | undefined;

  /**
   * The node of `old` is leaving (several edge URLs): the tunnels are bound through a connection
   * to another URL first, then let go on the old one, whose requests in flight finish there.
   * With no other URL free (two URLs, the other held by the paired session), the tunnels are
   * only let go on the old node, which the paired session covers; the session dials the old URL
   * again once it closes. A failed dial leaves everything as it was: the old connection's end
   * starts the usual reconnect.
   */
  private async moveAway(old: Mux, reason: string): Promise<void> {
    const from = this.dial.serverUrl;
    const next = this.chooseServer?.(from) ?? from;
    const oldIds = [...this.idOf.values()];
    if (next === from && !this.partner?.isConnected) return;
    if (next !== from) {
      for (const tunnel of this.tunnels) tunnel.onReconnecting(1, 0, reason, true);
      this.useServer(next);
      try {
        await this.connect();
      } catch {
        this.useServer(from);
        return;
      }
      this.leftBehind = old;
      old.once('close', () => {
        if (this.leftBehind === old) this.leftBehind = undefined;
      });
      if (this.closing) return void this.mux?.close('agent closing');
      await this.rebindAll();
      if (this.mux?.isClosed !== false) return;
      await delay(MOVE_LINGER_MS);
    }
    if (old.isClosed) return;
    for (const id of oldIds) old.sendControl({ type: 'unbind', tunnelId: id } satisfies AgentMessage);
  }

  /** One dial and rebind; true when the loop is over (bound, closed, or failed for good). */
  private async dialAndRebind(): Promise<boolean> {
    this.lastDialError = undefined;
    try {
      await this.connect();
    } catch (error) {
      if (error instanceof SvcError && error.code === ErrorCode.TOKEN_INVALID) {
        this.fail(error);
        return true;
      }
      this.lastDialError = (error as Error).message;
      return false;
    }
    // close() may have run while dialling: it could not see the new connection.
    if (this.closing) {
      this.mux?.close('agent closing');
      return true;
    }
    await this.rebindAll();
    return !this.mux?.isClosed || this.tunnels.size === 0;
  }

  private async rebindAll(): Promise<void> {
    await Promise.all(
      [...this.tunnels].map(async (tunnel) => {
        try {
          const bound = await this.sendBind(tunnel.bindRequest, tunnel, false);
          if (!this.tunnels.has(tunnel)) {
            // Released while the bind was in flight: give the name back at once.
            this.mux?.sendControl({ type: 'unbind', tunnelId: bound.tunnelId } satisfies AgentMessage);
            return;
          }
          this.register(tunnel, bound.tunnelId);
          tunnel.onRebound(bound);
        } catch (error) {
          const failure = error instanceof SvcError ? error : new SvcError(ErrorCode.INTERNAL, String(error));
          // Lost again mid-rebind: the tunnel stays, and the loop goes round once more.
          if (failure.code === ErrorCode.SESSION_CLOSED) return;
          if (!this.tunnels.delete(tunnel)) return;
          tunnel.onEnded(failure);
        }
      }),
    );
    if (this.tunnels.size === 0) await this.close();
  }
}

/**
 * The error an edge message reports. The message arrived as JSON, so its code is checked
 * against the catalog: a code this agent does not know (a newer edge) keeps the edge's sentence
 * under PROTOCOL rather than passing an unknown code on as a known one.
 */
function edgeError(message: { code: string; message: string }): SvcError {
  return new SvcError(isErrorCode(message.code) ? message.code : ErrorCode.PROTOCOL, message.message);
}

/** Resolves when `socket` closes, or after `timeoutMs`, whichever comes first. */
async function waitForClose(socket: Socket, timeoutMs: number): Promise<void> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    await once(socket, 'close', { signal: abort.signal });
  } catch {
    // Timed out: the edge is unreachable or frozen; leaving without its answer is fine.
  } finally {
    clearTimeout(timer);
  }
}
