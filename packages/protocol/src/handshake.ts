/** Path of the session endpoint on the edge's apex host. */
export const SESSION_PATH = '/_svc/session';
/** The `Upgrade` token that turns the HTTP/1.1 connection into a session. */
export const SESSION_UPGRADE = 'svc-mux/1';
/** Request header carrying the agent's version (for GET /v1/tunnels and compatibility). */
export const AGENT_VERSION_HEADER = 'x-svc-agent-version';
/**
 * Request header listing the optional frames the agent understands and sends (comma-separated
 * `Feature` values). An edge uses a feature with this agent only when it is listed here.
 */
export const FEATURES_HEADER = 'x-svc-features';
/** Optional protocol features, negotiated per session (agent: FEATURES_HEADER) or per stream (edge: RequestHead). */
export const Feature = {
  /** INFO frames: the agent passes the origin's 1xx heads, so the edge forwards `Expect: 100-continue`. */
  INFO: 'info',
} as const;
/** Response header the edge puts on the 101, naming its protocol revision. */
export const PROTOCOL_HEADER = 'x-svc-protocol';
/** Default heartbeat interval; the session ends after three silent intervals. */
export const HEARTBEAT_INTERVAL_MS = 2000;
/** Heartbeat silences tolerated before a session is declared dead. */
export const HEARTBEAT_MISSES = 3;
