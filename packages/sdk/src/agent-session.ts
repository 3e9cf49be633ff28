import { EventEmitter } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import {
  ErrorCode,
  HEARTBEAT_INTERVAL_MS,
  HEARTBEAT_MISSES,
  Mux,
  SvcError,
  type AgentMessage,
  type EdgeMessage,
  type ErrorCodeValue,
  type MuxStream,
  type RequestHead,
} from '@svcrouter/protocol';
import { dialSession, type DialOptions } from './dial.js';
import { reconnectDelay } from './backoff.js';

/** What the edge needs to bind one tunnel. */
export interface BindRequest {
  subdomain?: string;
  domain?: string;
  /** The hostname held before a reconnect, to take it back. */
  hostname?: string;
  /** Local address, shown on the edge's 502 page. */
  local: string;
}

/** A successful bind. */
export interface Bound {
  tunnelId: string;
  hostname: string;
  url: string;
}

/** What a session needs from each tunnel it carries. */
export interface SessionTunnel {
  readonly bindRequest: BindRequest;
  /** Serves one visitor stream. */
  handleStream(stream: MuxStream): void;
  /** The session is re-dialling; `attempt` counts from 1. */
  onReconnecting(attempt: number, delayMs: number, reason: string): void;
  /** The tunnel is live again after a reconnect. */
  onRebound(bound: Bound): void;
  /** The tunnel ended for good (released by the server, rebind refused, token revoked…). */
  onEnded(error: SvcError): void;
}

/**
 * One connection from an agent process to the edge, carrying any number of tunnels.
 * It re-dials with capped exponential backoff when the connection is lost and rebinds
 * every tunnel under its previous hostname. Long-lived state, hence a class.
 */
export class AgentSession extends EventEmitter {
  private mux: Mux | undefined;
  private readonly tunnels = new Map<string, SessionTunnel>();
  private readonly pendingBinds = new Map<number, { resolve: (b: Bound) => void; reject: (e: Error) => void }>();
  private nextRequestId = 1;
  private closing = false;
  private reconnecting = false;

  constructor(
    private readonly dial: DialOptions,
    private readonly reconnect = true,
  ) {
    super();
  }

  /** Number of tunnels on this session. */
  get tunnelCount(): number {
    return this.tunnels.size;
  }

  /** Dials the edge; rejects with SvcError TOKEN_INVALID for a bad token. */
  async connect(): Promise<void> {
    const socket = await dialSession(this.dial);
    const mux = new Mux(socket, {
      role: 'dialer',
      onStream: (stream) => this.onStream(stream),
      onControl: (message) => this.onControl(message as EdgeMessage),
    });
    this.mux = mux;
    mux.startHeartbeat(HEARTBEAT_INTERVAL_MS, HEARTBEAT_INTERVAL_MS * HEARTBEAT_MISSES);
    mux.once('close', (error?: Error) => this.onDisconnect(mux, error));
  }

  /** Binds a tunnel on this session; rejects with SvcError (limit, name taken…). */
  async bind(request: BindRequest, tunnel: SessionTunnel): Promise<Bound> {
    const bound = await this.sendBind(request);
    this.tunnels.set(bound.tunnelId, tunnel);
    return bound;
  }

  /** Releases one tunnel; closes the session when it was the last one. */
  release(tunnelId: string): void {
    if (!this.tunnels.delete(tunnelId)) return;
    this.mux?.sendControl({ type: 'unbind', tunnelId } satisfies AgentMessage);
    if (this.tunnels.size === 0) this.close();
  }

  /** Closes the connection and stops reconnecting. */
  close(): void {
    this.closing = true;
    this.mux?.close('agent closing');
    this.emit('closed');
  }

  private sendBind(request: BindRequest): Promise<Bound> {
    const mux = this.mux;
    if (!mux || mux.isClosed) return Promise.reject(new SvcError(ErrorCode.SESSION_CLOSED, 'not connected to the edge'));
    const requestId = this.nextRequestId++;
    return new Promise((resolve, reject) => {
      this.pendingBinds.set(requestId, { resolve, reject });
      mux.sendControl({ type: 'bind', requestId, ...request } satisfies AgentMessage);
    });
  }

  private onStream(stream: MuxStream): void {
    const head = stream.meta as RequestHead;
    const tunnel = this.tunnels.get(head.t);
    if (!tunnel) {
      stream.on('error', () => undefined);
      stream.reset('NOT_FOUND');
      return;
    }
    tunnel.handleStream(stream);
  }

  private onControl(message: EdgeMessage): void {
    switch (message.type) {
      case 'bound':
      case 'bindError': {
        const pending = this.pendingBinds.get(message.requestId);
        if (!pending) return;
        this.pendingBinds.delete(message.requestId);
        if (message.type === 'bound') pending.resolve(message);
        else pending.reject(new SvcError(message.code as ErrorCodeValue, message.message));
        return;
      }
      case 'released': {
        const tunnel = this.tunnels.get(message.tunnelId);
        if (!tunnel) return;
        this.tunnels.delete(message.tunnelId);
        tunnel.onEnded(new SvcError(message.code as ErrorCodeValue, message.message));
        if (this.tunnels.size === 0) this.close();
        return;
      }
      case 'fatal':
        this.fail(new SvcError(message.code as ErrorCodeValue, message.message));
        return;
      default:
        return;
    }
  }

  /** Ends every tunnel with `error` and stops for good. */
  private fail(error: SvcError): void {
    this.closing = true;
    const tunnels = [...this.tunnels.values()];
    this.tunnels.clear();
    for (const tunnel of tunnels) tunnel.onEnded(error);
    this.mux?.destroy();
    this.emit('closed');
  }

  private onDisconnect(mux: Mux, error?: Error): void {
    if (this.mux !== mux) return;
    for (const pending of this.pendingBinds.values()) {
      pending.reject(new SvcError(ErrorCode.SESSION_CLOSED, 'connection to the edge lost'));
    }
    this.pendingBinds.clear();
    if (this.closing || this.reconnecting || this.tunnels.size === 0) return;
    if (!this.reconnect) {
      this.fail(new SvcError(ErrorCode.SESSION_CLOSED, `connection to the edge lost${error ? `: ${error.message}` : ''}`));
      return;
    }
    void this.reconnectLoop(error?.message ?? 'connection closed');
  }

  private async reconnectLoop(reason: string): Promise<void> {
    this.reconnecting = true;
    try {
      for (let attempt = 1; !this.closing; attempt++) {
        const wait = reconnectDelay(attempt - 1);
        for (const tunnel of this.tunnels.values()) tunnel.onReconnecting(attempt, wait, reason);
        await delay(wait);
        if (this.closing) return;
        try {
          await this.connect();
        } catch (error) {
          if (error instanceof SvcError && error.code === ErrorCode.TOKEN_INVALID) return this.fail(error);
          reason = (error as Error).message;
          continue;
        }
        await this.rebindAll();
        // Lost again while rebinding: go round once more for the tunnels still waiting.
        if (this.mux?.isClosed && this.tunnels.size > 0) continue;
        return;
      }
    } finally {
      this.reconnecting = false;
    }
  }

  private async rebindAll(): Promise<void> {
    const tunnels = [...this.tunnels.entries()];
    this.tunnels.clear();
    await Promise.all(
      tunnels.map(async ([, tunnel]) => {
        try {
          const bound = await this.sendBind(tunnel.bindRequest);
          this.tunnels.set(bound.tunnelId, tunnel);
          tunnel.onRebound(bound);
        } catch (error) {
          const failure = error instanceof SvcError ? error : new SvcError(ErrorCode.INTERNAL, String(error));
          if (failure.code === ErrorCode.SESSION_CLOSED) {
            // Lost again mid-rebind: keep the tunnel, the next disconnect starts another loop.
            this.tunnels.set(`pending:${this.nextRequestId++}`, tunnel);
            return;
          }
          tunnel.onEnded(failure);
        }
      }),
    );
    if (this.tunnels.size === 0) this.close();
  }
}
