import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import type { BinderDeps } from './binder.js';
import type { ByteMeter, ExchangeObserver } from './exchange.js';
import type { Binding } from './router.js';
import type { Authenticate } from './session-acceptor.js';
import type { SessionLimitsConfig } from './session-limits.js';
import type { WebhookVerifier } from './traffic-step.js';

// What the edge is built from: the collaborators the composition root hands in.

export type VisitorRequest = IncomingMessage | Http2ServerRequest;
export type VisitorResponse = ServerResponse | Http2ServerResponse;

/** Serves requests for the apex host (REST API, dashboard, health). */
export type ApexHandler = (req: VisitorRequest, res: VisitorResponse) => void;

export interface EdgeDeps extends Omit<BinderDeps, 'router'> {
  store: Store;
  authenticate: Authenticate;
  heartbeatMs: number;
  /** Most agent sessions on this node, in all and per account; absent: no limit. */
  sessionLimits?: SessionLimitsConfig;
  log: Logger;
  /** Requests whose Host is the apex (shared domain itself, or an IP address). */
  apex: ApexHandler;
  /** Sees every finished exchange routed to a tunnel hostname (inspector, metering). */
  observe?: ExchangeObserver;
  /** Meters body bytes per account on the data path; false stops the transfer (quota). */
  meter?: ByteMeter;
  /** ACME HTTP-01: the key authorization for a token the CA is validating (from memory, or the shared store on a cluster), else undefined. */
  acmeChallenge?(token: string): string | undefined | Promise<string | undefined>;
  /** How long a request for a name in its grace period waits for its agent to come back (see Holds); 0 or absent: not at all. */
  holdMs?: number;
  /**
   * Several edge nodes: a binding that carries requests for `host` to the node holding its agent,
   * when this node holds none; undefined when no node does (or this node is alone).
   */
  remoteBinding?(host: string): Binding | undefined;
  /** SVC_TCP_PORTS: the ports of TCP tunnels; absent: TCP tunnels are off. */
  tcpPorts?: { from: number; to: number } | undefined;
  /** Interface TCP tunnel ports listen on (SVC_BIND_HOST); default every interface. */
  tcpHost?: string;
  /** Checks webhook signatures for tunnels with `verifyWebhook`; absent: every such request is refused (signature mismatch). */
  verifyWebhook?: WebhookVerifier;
}
