/** Path of the session endpoint on the edge's apex host. */
export const SESSION_PATH = '/_svc/session';
/** The `Upgrade` token that turns the HTTP/1.1 connection into a session. */
export const SESSION_UPGRADE = 'svc-mux/1';
/** Request header carrying the agent's version (for GET /v1/tunnels and compatibility). */
export const AGENT_VERSION_HEADER = 'x-svc-agent-version';
/** Response header on an upgrade the edge refused for a reason the agent should name: an ErrorCode. */
export const ERROR_CODE_HEADER = 'x-svc-error';
/** Response header the edge puts on the 101, naming its protocol revision. */
export const PROTOCOL_HEADER = 'x-svc-protocol';
/**
 * Default heartbeat interval. The agent sends a PING each interval and the edge only answers
 * (a quiet session costs the edge one read and one write per interval); cloudflared's 5 s and
 * ngrok's 10 s are the neighbours. The agent ends a session after HEARTBEAT_MISSES silent
 * intervals, the edge after EDGE_SILENT_INTERVALS.
 */
export const HEARTBEAT_INTERVAL_MS = 5000;
/** Heartbeat silences the agent tolerates before it declares the edge gone. */
export const HEARTBEAT_MISSES = 3;
/** Intervals without a byte from the agent after which the edge ends its session. */
export const EDGE_SILENT_INTERVALS = 2;
/** Request header on the agent's upgrade: the heartbeat interval (ms) it asks for. */
export const HEARTBEAT_HEADER = 'x-svc-heartbeat-ms';
/** Heartbeat intervals an agent may ask for, ms; outside them the edge's own applies. */
export const MIN_ASKED_HEARTBEAT_MS = 1000;
export const MAX_ASKED_HEARTBEAT_MS = 60_000;

/** The interval a session runs at: what the agent asked for when within bounds, else the edge's. */
export function agreeHeartbeat(asked: string | string[] | undefined, edgeMs: number): number {
  const value = typeof asked === 'string' && /^\d{1,6}$/.test(asked) ? Number(asked) : Number.NaN;
  return value >= MIN_ASKED_HEARTBEAT_MS && value <= MAX_ASKED_HEARTBEAT_MS ? value : edgeMs;
}
/**
 * Header both sides put on the handshake (the agent on its upgrade request, the edge on its 101):
 * the optional frames it understands, comma-separated `Feature` values. A side sends such a frame
 * only to a peer that listed it, as a peer of an older version closes the session on an unknown
 * frame type.
 */
export const FEATURES_HEADER = 'x-svc-features';
/** Optional protocol features, negotiated per session. */
export const Feature = {
  /** INFO frames: the agent passes the origin's 1xx heads, so the edge forwards `Expect: 100-continue`. */
  INFO: 'info',
  /** TRAILERS frames (type 9), both ways. */
  TRAILERS: 'trailers',
  /** The edge enforces a bind's `policy`: an agent never sends rules to an edge that would ignore them. */
  POLICY: 'policy',
  /** The edge pools binds with `pool: true` and retries UPSTREAM_REFUSED: an agent never sends such a bind to an edge that would take the name over instead. */
  POOL: 'pool',
  /** The edge signs visitors in with OpenID Connect: a policy's `oidc`, `allowEmail`, `allowDomain`. */
  OIDC: 'oidc',
} as const;
/** Feature: the TRAILERS frame (type 9). */
export const FEATURE_TRAILERS = Feature.TRAILERS;
/** Every feature this version understands, in FEATURES_HEADER order. */
export const ALL_FEATURES: readonly string[] = [Feature.INFO, Feature.TRAILERS, Feature.POLICY, Feature.OIDC, Feature.POOL];
/** The features this version understands, as sent in FEATURES_HEADER. */
export const LOCAL_FEATURES = ALL_FEATURES.join(',');

/** The feature names of a FEATURES_HEADER value (absent: an older peer, none). */
export function parseFeatures(value: string | string[] | undefined): Set<string> {
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  const features = new Set<string>();
  for (const token of text.split(',')) {
    const name = token.trim().toLowerCase();
    if (name) features.add(name);
  }
  return features;
}
