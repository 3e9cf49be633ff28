import type { ErrorCodeValue } from './errors.js';
import type { TunnelPolicy } from './policy.js';
import type { RouteSpec } from './routes.js';

/**
 * Control messages (JSON, stream 0) and stream metadata. One type per direction, each
 * variant with a one-line comment, as the whole protocol should fit on one screen.
 */

/** Agent → edge. */
export type AgentMessage =
  /**
   * Ask for a public hostname; `subdomain`/`domain` pin it, `hostname` reclaims one after a reconnect.
   * `group` names the agent process: its sessions to other edge nodes may hold the same hostname.
   * `policy` holds the tunnel's rules (access…), sent only to an edge that lists Feature.POLICY.
   */
  | {
      type: 'bind';
      requestId: number;
      subdomain?: string;
      domain?: string;
      hostname?: string;
      local: string;
      group?: string;
      policy?: TunnelPolicy;
      /** Absent: an HTTP tunnel. `tcp`: a TCP port on the edge whose connections arrive as raw streams (see TCP_METHOD). */
      proto?: 'tcp';
      /** With `proto: 'tcp'`: the account's reserved address (`host:port` or a port) to bind. */
      remoteAddr?: string;
      /** True: join the name's pool (other agents of the account serve it too) instead of taking it over. */
      pool?: boolean;
      /** Paths served by other local services than `local` (routes.ts); absent: `local` serves every path. */
      routes?: RouteSpec[];
    }
  /** Release a tunnel bound on this session (clean exit). */
  | { type: 'unbind'; tunnelId: string };

/** Edge → agent. */
export type EdgeMessage =
  /** Sent once after the upgrade: who we are and how often we ping. */
  | { type: 'hello'; sessionId: string; serverVersion: string; heartbeatMs: number }
  /** The bind succeeded: the tunnel is live at `url`. */
  | { type: 'bound'; requestId: number; tunnelId: string; hostname: string; url: string }
  /** The bind failed; `code` is from the error catalog, `message` is for the terminal. */
  | { type: 'bindError'; requestId: number; code: ErrorCodeValue; message: string }
  /** A live tunnel was released by the server (API delete, domain removed, taken over). */
  | { type: 'released'; tunnelId: string; code: ErrorCodeValue; message: string }
  /**
   * The edge is shutting down: it takes no new sessions, lets the requests in flight finish, then
   * closes. Not a failure: the agent reconnects as soon as an edge answers at its URL again.
   */
  | { type: 'leaving'; message: string }
  /** The whole session is refused or ended (token revoked…); the socket closes next. */
  | { type: 'fatal'; code: ErrorCodeValue; message: string };

/** OPEN metadata of a visitor request stream (edge → agent). */
export interface RequestHead {
  /** HTTP method. */
  m: string;
  /** Path and query, as the visitor sent them. */
  p: string;
  /** Header pairs, flat: [name, value, name, value…], hop-by-hop headers already removed. */
  h: string[];
  /** Tunnel id the request is for (one session carries many tunnels). */
  t: string;
  /** 1 when a request body follows on the stream; absent when the OPEN frame ended it. */
  b?: 1;
  /** Present when the visitor asked for a protocol upgrade (WebSocket…): bytes flow raw after the 101. */
  u?: 1;
  /** 1 when the edge takes INFO frames (1xx heads) on this stream; an agent sends none without it. */
  i?: 1;
  /** A TCP connection's visitor address, `ip:port` (m is TCP_METHOD): for PROXY protocol and the log. */
  a?: string;
  /** A TCP connection's public port on the edge. */
  o?: number;
}

/** HEADERS metadata of a response (agent → edge). */
export interface ResponseHead {
  /** Status code. */
  s: number;
  /** Header pairs, flat, as the origin sent them. */
  h: string[];
}

/** Reset codes a stream may carry besides CANCEL. */
export const ResetCode = {
  /** The agent could not connect to the local service. */
  UPSTREAM_UNREACHABLE: 'UPSTREAM_UNREACHABLE',
  /**
   * The agent could not connect to the local service and sent it nothing (connection refused, no
   * such host): the edge may try the request on another member of a pool. Agents of 2026-12-05
   * on send it instead of UPSTREAM_UNREACHABLE for these failures; the edge shows the same page.
   */
  UPSTREAM_REFUSED: 'UPSTREAM_REFUSED',
  /** The local service failed mid-response. */
  UPSTREAM_ERROR: 'UPSTREAM_ERROR',
  /** The visitor went away, or the request was aborted. */
  CANCEL: 'CANCEL',
  /** The stream's handler failed on the sender's side; the session carries on. */
  STREAM_FAILED: 'STREAM_FAILED',
  /**
   * Not a failure: the reply is complete and the rest of the request body is not wanted (as
   * HTTP/2's RST_STREAM NO_ERROR after a complete response, RFC 9113 §8.1).
   */
  NO_ERROR: 'NO_ERROR',
  /** A TCP connection carried no byte either way for the agent's `--idle-timeout`. */
  IDLE_TIMEOUT: 'IDLE_TIMEOUT',
} as const;
