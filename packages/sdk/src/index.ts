export { forward, forwardMany, Tunnel, DEFAULT_SERVER_URL, type ForwardOptions } from './forward.js';
export { AgentSession, type BindRequest, type Bound } from './agent-session.js';
export { dialSession, type DialOptions } from './dial.js';
export { parseLocalTarget, type LocalTarget } from './local-target.js';
export { reconnectDelay, RECONNECT_BASE_MS, RECONNECT_CAP_MS } from './backoff.js';
export type { RequestLog } from './origin-proxy.js';
export { ApiClient, ApiError } from './api-client.js';
