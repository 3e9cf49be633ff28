/**
 * The error catalog shared by the edge, the agent and the SDK. The exact user-facing
 * messages live here and nowhere else; tests import them from here.
 */
export const ErrorCode = {
  TOKEN_INVALID: 'TOKEN_INVALID',
  TUNNEL_LIMIT: 'TUNNEL_LIMIT',
  BANDWIDTH_LIMIT: 'BANDWIDTH_LIMIT',
  TUNNEL_OFFLINE: 'TUNNEL_OFFLINE',
  UPSTREAM_UNREACHABLE: 'UPSTREAM_UNREACHABLE',
  NAME_TAKEN: 'NAME_TAKEN',
  NAME_INVALID: 'NAME_INVALID',
  NAME_RESERVED: 'NAME_RESERVED',
  DOMAIN_NOT_VERIFIED: 'DOMAIN_NOT_VERIFIED',
  /** The agent could not open a session with the edge (refused, DNS, timeout, not an edge). */
  EDGE_UNREACHABLE: 'EDGE_UNREACHABLE',
  TUNNEL_RELEASED: 'TUNNEL_RELEASED',
  SESSION_CLOSED: 'SESSION_CLOSED',
  PROTOCOL: 'PROTOCOL',
  INTERNAL: 'INTERNAL',
} as const;
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

const KNOWN_CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));

/** True for a code of this catalog: a code read off the wire is checked with this, never cast. */
export function isErrorCode(value: string): value is ErrorCodeValue {
  return KNOWN_CODES.has(value);
}

/** Exact messages from SPEC.md §5 and §7. */
export const Messages = {
  TOKEN_INVALID: 'invalid or missing svcRouter token',
  TUNNEL_LIMIT: 'Tunnel limit reached',
  BANDWIDTH_LIMIT: 'Bandwidth limit reached',
  TUNNEL_OFFLINE: 'This tunnel is offline',
} as const;

/** An expected failure with a stable code and a sentence for humans. */
export class SvcError extends Error {
  override name = 'SvcError';
  constructor(
    readonly code: ErrorCodeValue,
    message: string,
  ) {
    super(message);
  }
}

/** A stream was aborted; `remote` says whether the peer did it. */
export class StreamResetError extends Error {
  override name = 'StreamResetError';
  constructor(
    readonly code: string,
    readonly remote: boolean,
  ) {
    super(`stream reset by ${remote ? 'peer' : 'us'}: ${code}`);
  }
}
