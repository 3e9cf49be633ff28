import type { Logger } from 'pino';
import { ErrorCode, type Mux, SvcError, type AgentMessage, type EdgeMessage, type ErrorCodeValue } from '@svcrouter/protocol';
import type { AccessCheck, TrafficRules } from '../policy/index.js';
import type { RouteTable } from '@svcrouter/protocol';

/** A live binding: a public hostname served by one tunnel on one agent session. */
export interface Binding {
  tunnelId: string;
  accountId: string;
  hostname: string;
  /** Public URL, e.g. `https://abc.localhost:8443`. */
  url: string;
  /** The agent's local address (`localhost:3000`), shown on the 502 page. */
  local: string;
  /** Whether the agent chose the name (kept when the agent leaves) or got a random one. */
  pinned: boolean;
  /** The agent process (its bind's `group`), whose sessions on other nodes may hold the same hostname; absent: none. */
  group?: string;
  /** When it was bound (Date.now()); between two agents of one account on two nodes, the later holds the name. */
  boundAt?: number;
  /** The agent's session on this node, or the link to the node that holds it (cluster/). */
  session: BindingSession;
  /**
   * The tunnel's access rules, checked before a request goes to the agent; absent: none (or, for
   * a binding that carries requests to another node, checked on the node holding the agent).
   */
  access?: AccessCheck;
  /** The tunnel's traffic rules (rate limit, edge rules, webhook check, header rules); absent: none. */
  traffic?: TrafficRules;
  /** The pool this binding is a member of (`--pool`); absent: the name is this binding's alone. */
  pool?: Pool;
  /**
   * The tunnel's routes (paths its agent serves from other local services), each to its
   * `host:port`; absent: `local` serves every path. Names the target in records and on the 502 page.
   */
  routes?: RouteTable<string>;
  /** The same routes as JSON (`[{path, local}]`), as the tunnels row and the cluster route keep them. */
  routesJson?: string;
  /** A pool member's requests (or TCP connections) in flight on this node, which picks the next member. */
  inFlight?: number;
  /** `tls`: a TLS passthrough tunnel (edge/tls/), whose connections the HTTPS port hands over by SNI; absent: HTTP or TCP. */
  proto?: 'tls';
}

/** What a binding must have; the rest is absent (undefined) until the binder sets it. */
export type BindingFields = Pick<Binding, 'tunnelId' | 'accountId' | 'hostname' | 'url' | 'local' | 'pinned' | 'session'> &
  Partial<Omit<Binding, 'tunnelId' | 'accountId' | 'hostname' | 'url' | 'local' | 'pinned' | 'session'>>;

/**
 * A binding with every field present, in one order, whatever kind of tunnel it is: all bindings
 * then share one hidden class in V8, and the request path's reads of `access`, `traffic`, `pool`
 * and the rest stay monomorphic on an edge that serves tunnels with rules, pools and routes
 * beside plain ones (objects built field by field, or with fields left out, would each get
 * their own shape, and every read of a binding would check them all).
 */
export function newBinding(fields: BindingFields): Binding {
  // Every field required here, so one added to Binding and not to this literal fails to compile.
  const binding = {
    tunnelId: fields.tunnelId,
    accountId: fields.accountId,
    hostname: fields.hostname,
    url: fields.url,
    local: fields.local,
    pinned: fields.pinned,
    group: fields.group,
    boundAt: fields.boundAt,
    session: fields.session,
    access: fields.access,
    traffic: fields.traffic,
    pool: fields.pool,
    routes: fields.routes,
    routesJson: fields.routesJson,
    inFlight: fields.inFlight,
    proto: fields.proto,
  } satisfies Record<keyof Binding, unknown>;
  return binding;
}

/**
 * The members of a pooled hostname on this node: several bindings of one account's tunnels, each
 * with its own agent, sharing one object. Requests go to the member with the fewest in flight.
 */
export interface Pool {
  readonly members: Binding[];
  /** Where the next scan starts, so members with equal counts take turns (round robin). */
  next: number;
  /** The policy every member binds with (policySignature): a member with other rules is refused. */
  readonly signature: string;
}

/** What a binding's requests travel over: the streams of an agent session, or of a peer link. */
export interface BindingSession {
  readonly mux: Mux;
  readonly isClosed: boolean;
  /**
   * Optional protocol features of the agent behind this session (`Feature` values); absent when
   * unknown (a peer link), which counts as none: the edge then answers `100 Continue` itself.
   */
  readonly agentFeatures?: ReadonlySet<string>;
  /** The key the agent signed in with; absent on a peer link. */
  readonly keyId?: string;
  /** Tells the agent one tunnel is gone and forgets it; a peer link has no agent to tell. */
  release(tunnelId: string, code: ErrorCodeValue, text: string): Binding | undefined;
}

/**
 * Most binds one session may have waiting for an answer. An agent binds each tunnel once (all of
 * them together after a reconnect, up to the largest plan's 1,000); without a bound, one frame of
 * binds after another would queue store work and memory without end.
 */
export const MAX_BINDS_IN_FLIGHT = 1000;

/**
 * How a binding left its session, which decides what happens to its name:
 * - 'goodbye': the agent unbound it or exited cleanly: the name is free at once, a random one forgotten.
 * - 'ended': the edge ended the session on purpose (its token revoked, the edge stopping): nothing
 *   can bind the name again through this session, so it is free at once and visitors get the
 *   offline page; the tunnel stays listed offline.
 * - 'lost': the connection was lost: the name is kept for its account for the grace period,
 *   and its visitors are held for the reconnect (SVC_NAME_GRACE_MS, SVC_HOLD_MS).
 */
export type UnbindReason = 'goodbye' | 'ended' | 'lost';

/** What a session asks of the edge for its control messages. */
export interface SessionHandlers {
  bind(session: EdgeSession, message: Extract<AgentMessage, { type: 'bind' }>): Promise<Binding>;
  unbind(session: EdgeSession, binding: Binding, reason: UnbindReason): void;
  /** The agent has been told of the binding, so streams for it may follow. */
  bound?(binding: Binding): void;
}

/**
 * One connected agent: its multiplexed connection, who it authenticated as, and the
 * tunnels bound on it. Long-lived state, hence a class.
 */
export class EdgeSession implements BindingSession {
  readonly bindings = new Map<string, Binding>();
  /** Optional protocol features the agent announced (`Feature` values, from FEATURES_HEADER). */
  agentFeatures: ReadonlySet<string> = new Set();
  private ended = false;
  /** The edge ends the session on purpose (see `end`): its bindings leave as 'ended', not 'lost'. */
  private endedByEdge = false;
  private bindsInFlight = 0;

  constructor(
    readonly id: string,
    readonly accountId: string,
    readonly keyId: string,
    readonly agentIp: string,
    readonly agentVersion: string,
    readonly mux: Mux,
    private readonly handlers: SessionHandlers,
    private readonly log: Logger,
  ) {}

  /** Whether the connection has ended. */
  get isClosed(): boolean {
    return this.ended || this.mux.isClosed;
  }

  /** Sends a control message to the agent. */
  send(message: EdgeMessage): void {
    this.mux.sendControl(message);
  }

  /** Handles one control message from the agent. Never throws: failures become bindError. */
  onControl(message: AgentMessage): void {
    if (message?.type === 'bind' && typeof message.requestId === 'number') {
      if (this.bindsInFlight >= MAX_BINDS_IN_FLIGHT) {
        const text = `too many binds in flight on one session (${MAX_BINDS_IN_FLIGHT}); wait for their answers`;
        return this.send({ type: 'bindError', requestId: message.requestId, code: ErrorCode.PROTOCOL, message: text });
      }
      this.bindsInFlight++;
      // The binder registers the binding in `bindings` and the router in one synchronous step,
      // so a session that ends at any point releases it through onClosed, and a release
      // (takeover, API delete) arriving before 'bound' is sent still finds it.
      this.handlers.bind(this, message).then(
        (binding) => {
          this.bindsInFlight--;
          if (this.isClosed) return;
          if (this.bindings.get(binding.tunnelId) !== binding) {
            const text = `${binding.hostname} was released before the bind completed`;
            return this.send({ type: 'bindError', requestId: message.requestId, code: ErrorCode.TUNNEL_RELEASED, message: text });
          }
          this.send({
            type: 'bound',
            requestId: message.requestId,
            tunnelId: binding.tunnelId,
            hostname: binding.hostname,
            url: binding.url,
          });
          this.handlers.bound?.(binding);
        },
        (error: unknown) => {
          this.bindsInFlight--;
          const failure = error instanceof SvcError ? error : new SvcError(ErrorCode.INTERNAL, 'the edge could not bind the tunnel');
          if (!(error instanceof SvcError)) this.log.error({ err: error }, 'bind failed');
          if (this.isClosed) return;
          this.send({ type: 'bindError', requestId: message.requestId, code: failure.code, message: failure.message });
        },
      );
    } else if (message?.type === 'unbind' && typeof message.tunnelId === 'string') {
      const binding = this.bindings.get(message.tunnelId);
      if (!binding) return;
      this.bindings.delete(message.tunnelId);
      this.handlers.unbind(this, binding, 'goodbye');
    }
  }

  /** Tells the agent one tunnel is gone (deleted, taken over) and forgets it. */
  release(tunnelId: string, code: ErrorCodeValue, text: string): Binding | undefined {
    const binding = this.bindings.get(tunnelId);
    if (!binding) return undefined;
    this.bindings.delete(tunnelId);
    if (!this.isClosed) this.send({ type: 'released', tunnelId, code, message: text });
    return binding;
  }

  /** Ends the session with a reason the agent prints (token revoked…); its names are free at once. */
  fatal(code: ErrorCodeValue, text: string): void {
    if (!this.isClosed) this.send({ type: 'fatal', code, message: text });
    this.end(code);
  }

  /**
   * Ends the session on purpose (a revoked token, the edge stopping): its bindings leave as
   * 'ended', so their names are not held for a reconnect that cannot bring them back here.
   */
  end(reason: string): void {
    this.endedByEdge = true;
    this.mux.close(reason);
  }

  /** Called once when the connection is gone: every binding goes offline, ended on purpose or lost. */
  onClosed(): void {
    if (this.ended) return;
    this.ended = true;
    const bindings = [...this.bindings.values()];
    this.bindings.clear();
    const reason = this.endedByEdge ? 'ended' : 'lost';
    for (const binding of bindings) this.handlers.unbind(this, binding, reason);
  }
}
