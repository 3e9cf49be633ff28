/** Path of the session endpoint on the edge's apex host. */
export const SESSION_PATH = '/_svc/session';
/** The `Upgrade` token that turns the HTTP/1.1 connection into a session. */
export const SESSION_UPGRADE = 'svc-mux/1';
/** Request header carrying the agent's version (for GET /v1/tunnels and compatibility). */
export const AGENT_VERSION_HEADER = 'x-svc-agent-version';
/** Response header the edge puts on the 101, naming its protocol revision. */
export const PROTOCOL_HEADER = 'x-svc-protocol';
/** Default heartbeat interval; the session ends after three silent intervals. */
export const HEARTBEAT_INTERVAL_MS = 2000;
/** Heartbeat silences tolerated before a session is declared dead. */
export const HEARTBEAT_MISSES = 3;
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
} as const;
/** Feature: the TRAILERS frame (type 9). */
export const FEATURE_TRAILERS = Feature.TRAILERS;
/** Every feature this version understands, in FEATURES_HEADER order. */
export const ALL_FEATURES: readonly string[] = [Feature.INFO, Feature.TRAILERS, Feature.POLICY];
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
