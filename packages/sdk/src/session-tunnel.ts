import type { CallbackStream, RouteSpec, SvcError, TunnelPolicy } from '@svcrouter/protocol';

// The contract between an agent session and the tunnels it carries: what a bind asks for and
// gets, and what the session calls on each tunnel as its connection comes and goes.

/** What the edge needs to bind one tunnel. */
export interface BindRequest {
  subdomain?: string;
  domain?: string;
  /** The hostname held before a reconnect, to take it back. */
  hostname?: string;
  /** Local address, shown on the edge's 502 page. */
  local: string;
  /** The agent process, when it holds the hostname through sessions to several edge nodes. */
  group?: string;
  /** The tunnel's rules (passwords hashed), sent with every bind and rebind; absent: none. */
  policy?: TunnelPolicy;
  /** `tcp`: a TCP tunnel (a port on the edge); absent: HTTP. */
  proto?: 'tcp';
  /** A TCP tunnel's reserved address to bind (`--remote-addr`). */
  remoteAddr?: string;
  /** Join the name's pool: several agents of the account serve it, each request going to one (`--pool`). */
  pool?: boolean;
  /** Paths served by other local services (`--route`), so the edge names the right one; absent: none. */
  routes?: RouteSpec[];
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
  handleStream(stream: CallbackStream): void;
  /**
   * The session is re-dialling; `attempt` counts from 1 in each episode of lost connection.
   * `planned`: the edge said it was leaving (a restart), so the loss is no failure.
   */
  onReconnecting(attempt: number, delayMs: number, reason: string, planned: boolean): void;
  /** The tunnel is live again after a reconnect. */
  onRebound(bound: Bound): void;
  /** The tunnel ended for good (released by the server, rebind refused, token revoked…). */
  onEnded(error: SvcError): void;
}
