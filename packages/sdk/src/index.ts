// @svcrouter/sdk: forward() (a tunnel from code: dial, session, binds, reconnects) and the typed
// REST client. The `svc` command is built on it.
// May use: @svcrouter/protocol.
// The error catalog, so a program catches forward()'s typed errors with this package alone.
export { BindMessages, ErrorCode, Messages, SvcError, isErrorCode, type ErrorCodeValue } from '@svcrouter/protocol';
export { forward, forwardMany, DEFAULT_SERVER_URL, START_ATTEMPTS, type ForwardOptions } from './forward.js';
export { TunnelGroup, type GroupOptions, type GroupTunnelOptions } from './tunnel-group.js';
export { Tunnel, type TunnelEvents } from './tunnel.js';
export { AgentSession } from './agent-session.js';
export type { BindRequest, Bound } from './session-tunnel.js';
export { parseServerUrls } from './edge-servers.js';
export { dialEdge, dialSession, type DialOptions, type EdgeConnection } from './dial.js';
export { isOriginProto, parseLocalTarget, type LocalTarget, type OriginProto } from './local-target.js';
export { hostHeaderProblem } from './host-header.js';
export { checkedRoutes, parseRouteFlag, routeProblem, type CheckedRoute, type RouteOptions } from './routes.js';
export {
  accessProblem,
  buildPolicy,
  mergedPolicy,
  splitList,
  type AccessOptions,
  type AccessRuleOptions,
  type PolicyBlock,
} from './access.js';
export { TRAFFIC_OPTION_KEYS, trafficPolicy, trafficProblem, type TrafficOptions } from './traffic-options.js';
export { reconnectDelay, RECONNECT_BASE_MS, RECONNECT_CAP_MS } from './backoff.js';
export type { RequestLog } from './origin-proxy.js';
export {
  DEFAULT_TCP_IDLE_TIMEOUT_MS,
  MAX_TCP_IDLE_TIMEOUT_MS,
  idleTimeoutTooLong,
  parseTcpTarget,
  type TcpConnectionLog,
  type TcpProxyOptions,
  type TcpTarget,
} from './tcp-proxy.js';
export { isProxyProtocolVersion, proxyProtocolHeader, type ProxyProtocolVersion } from './proxy-protocol.js';
export { ApiClient, ApiError, ClientErrorCode, type ApiClientOptions } from './api-client.js';
export { parseSse, type SseEvent } from './sse.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  WEBHOOK_TOLERANCE_SECONDS,
  type WebhookEvent,
  type WebhookHeaders,
} from './verify-webhook.js';
export type {
  Account,
  CapturedRequest,
  CreatedKey,
  CreatedWebhook,
  DailyUsage,
  DeliveryQuery,
  Domain,
  DomainCheck,
  Key,
  NewKey,
  PasswordChange,
  RequestFilters,
  RequestPage,
  RequestStreamEvent,
  TcpAddress,
  StreamFilters,
  TunnelInfo,
  Usage,
  UsageHistory,
  UsageRange,
  NewWebhook,
  Webhook,
  WebhookDelivery,
  WebhookEventType,
} from './api-types.js';
export type { paths, components, operations } from './generated/api-types.js';
export {
  Inspector,
  ReplayError,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_REQUESTS,
  type InspectOptions,
  type InspectorEvents,
  type InspectedTunnel,
  type ReplayEdits,
} from './inspector.js';
export type { InspectedRequest, CapturedMessage, CapturedBody } from './capture.js';
export type { TlsForwardOptions } from './forward-tls.js';
