/**
 * The error catalog shared by the edge, the agent and the SDK. The exact user-facing
 * messages live here and nowhere else; tests import them from here.
 */
export const ErrorCode = {
  TOKEN_INVALID: 'TOKEN_INVALID',
  TUNNEL_LIMIT: 'TUNNEL_LIMIT',
  /** The edge node holds as many agent sessions as it takes, in all or for this account. */
  SESSION_LIMIT: 'SESSION_LIMIT',
  BANDWIDTH_LIMIT: 'BANDWIDTH_LIMIT',
  TUNNEL_OFFLINE: 'TUNNEL_OFFLINE',
  UPSTREAM_UNREACHABLE: 'UPSTREAM_UNREACHABLE',
  NAME_TAKEN: 'NAME_TAKEN',
  NAME_INVALID: 'NAME_INVALID',
  NAME_RESERVED: 'NAME_RESERVED',
  DOMAIN_NOT_VERIFIED: 'DOMAIN_NOT_VERIFIED',
  /** A bind's policy is malformed, or would drop the rules of the tunnel it takes over. */
  POLICY_INVALID: 'POLICY_INVALID',
  /** The agent could not open a session with the edge (refused, DNS, timeout, not an edge). */
  EDGE_UNREACHABLE: 'EDGE_UNREACHABLE',
  TUNNEL_RELEASED: 'TUNNEL_RELEASED',
  SESSION_CLOSED: 'SESSION_CLOSED',
  PROTOCOL: 'PROTOCOL',
  /** A TCP tunnel could not get a port: the range is used up, or the edge has none. */
  TCP_PORT_UNAVAILABLE: 'TCP_PORT_UNAVAILABLE',
  INTERNAL: 'INTERNAL',
} as const;
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

const KNOWN_CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));

/** True for a code of this catalog: a code read off the wire is checked with this, never cast. */
export function isErrorCode(value: string): value is ErrorCodeValue {
  return KNOWN_CODES.has(value);
}

/** The exact sentences agents and visitors read; tests compare against these. */
export const Messages = {
  TOKEN_INVALID: 'invalid or missing svcRouter token',
  TUNNEL_LIMIT: 'Tunnel limit reached',
  SESSION_LIMIT: 'Session limit reached',
  BANDWIDTH_LIMIT: 'Bandwidth limit reached',
  TUNNEL_OFFLINE: 'This tunnel is offline',
  TCP_PORT_UNAVAILABLE: 'No TCP port available',
} as const;

/** The sentences of a refused or ended bind, as the agent prints them. */
export const BindMessages = {
  /** The hostname is held online by another account. */
  nameTaken: (hostname: string) => `${hostname} is already in use by another account; choose another SVC_SUBDOMAIN`,
  /** SVC_SUBDOMAIN is not one DNS label. */
  subdomainInvalid: (label: string) => `invalid subdomain "${label}": use 1-63 letters, digits or inner hyphens (a DNS label)`,
  /** SVC_SUBDOMAIN is one of the names never handed to tunnels. */
  subdomainReserved: (label: string) => `subdomain "${label}" is reserved; choose another SVC_SUBDOMAIN`,
  /** A reconnecting agent asked for a reserved name. */
  nameReserved: (label: string) => `subdomain "${label}" is reserved`,
  /** A reconnecting agent asked for a name outside the shared domain that its account does not own. */
  notBindable: (hostname: string) => `${hostname} is not a hostname this account can bind`,
  /** SVC_DOMAIN on a server without custom domains. */
  domainNotVerified: (domain: string) => `custom domain ${domain} is not added and verified on this account`,
  /** A bind with --pool onto a name held without it, or the reverse (`heldAsPool`: the name is a pool's). */
  poolMismatch: (hostname: string, heldAsPool: boolean) =>
    heldAsPool
      ? `${hostname} is served by a pool of agents: add --pool to join it, or stop its members first`
      : `${hostname} is served by an agent without --pool: stop it first, or bind without --pool to take it over`,
  /** The edge is too old to pool binds: it would take the name over instead. */
  poolUnsupported: 'this edge does not pool tunnels (upgrade svc-server); the tunnel was not bound',
  /** The older agent's notice when a newer agent of the same account takes its name. */
  takenOver: (hostname: string) => `${hostname} was taken over by a newer agent of the same account`,
  /** The second connection of one agent reached the node its first connection is on (two SVC_SERVER URLs, one node). */
  sameNode: (hostname: string) =>
    `${hostname} is already served by this agent through this edge node; give SVC_SERVER URLs of different nodes`,
  /** Two tunnels of one agent asked for one name: the second would silently replace the first. */
  sameAgent: (hostname: string) =>
    `${hostname} is already bound by another tunnel of this agent; give each tunnel its own name (or --pool both)`,
  sessionClosed: 'the agent disconnected during the bind',
  /** The tunnel limit is reached with slots held by tunnels whose agents lost their connection. */
  tunnelLimitAway: (away: number, graceSeconds: number) =>
    `Tunnel limit reached: ${away === 1 ? "1 of the account's tunnels keeps its name" : `${away} of the account's tunnels keep their names`} ` +
    `for an agent that lost its connection, for up to ${graceSeconds} s; wait, or delete it (DELETE /v1/tunnels/:id)`,
  /** The bind's policy failed the edge's check (`problem` is `key: message`). */
  policyInvalid: (problem: string) => `invalid access rules: ${problem}`,
  /** A bind without rules tried to take over a tunnel that has them. */
  policyRequired: (hostname: string) =>
    `${hostname} is protected by access rules; bind it with rules, or release it first (DELETE /v1/tunnels/:id)`,
  /** A pool member whose rules differ from its pool's: visitors would meet one lock or another. */
  poolPolicyMismatch: (hostname: string) =>
    `${hostname} is served by a pool whose members have other rules: a pool's members share one policy (the same access rules, user names and traffic rules); bind with the rules of the others`,
  /** The edge is too old to enforce rules, so the tunnel is not bound without them. */
  policyUnsupported: 'this edge does not enforce access rules (upgrade svc-server); the tunnel was not bound',
  /** The edge is too old for single sign-on, so the tunnel is not bound without it. */
  oidcUnsupported: 'this edge does not offer single sign-on (--oidc; upgrade svc-server); the tunnel was not bound',
  /** The bind names an OIDC provider the server does not have. */
  oidcUnknown: (name: string, known: readonly string[]) =>
    `unknown OIDC provider "${name}": ${known.length === 0 ? 'this server has none (set SVC_OIDC_PROVIDERS)' : `this server offers ${known.join(', ')}`}`,
  noFreeName: 'could not find a free random name; try again',
  /** A TLS passthrough bind with access rules: the edge never sees its requests, so it cannot check them. */
  tlsNoAccess:
    'access rules (basic auth, IP allow/deny, single sign-on) cannot apply to a TLS tunnel: the edge passes its connections through without decrypting them; check visitors in the local service',
  /** `--remote-addr` names a port that is not reserved by this account. */
  tcpAddressNotYours: (addr: string) => `${addr} is not a TCP address reserved by this account; reserve one with POST /v1/tcp-addresses`,
  /** `--remote-addr` (or a reconnect) names a port that another account holds right now. */
  tcpAddressTaken: (addr: string) => `${addr} is in use by another tunnel`,
  /** A bind names a port outside SVC_TCP_PORTS (a reservation or lease from before the range changed, or any other port). */
  tcpPortOutsideRange: (port: number, from: number, to: number) =>
    `port ${port} is outside this edge's TCP ports ${from === to ? String(from) : `${from}-${to}`}`,
  /** `--remote-addr` names a host other than the edge's, whose TCP addresses are all `<shared domain>:<port>`. */
  tcpAddressOtherHost: (addr: string, host: string) =>
    `${addr} is not an address of this edge: its TCP addresses are ${host}:<port> (or the port alone)`,
  /** `--remote-addr` is not `host:port` or a port. */
  tcpAddressInvalid: (addr: string) => `invalid TCP address "${addr}": expected host:port or a port`,
} as const;

/** The sentences of a session the edge refused for its limits (SVC_MAX_SESSIONS, SVC_MAX_ACCOUNT_SESSIONS). */
export const SessionLimitMessages = {
  node: (max: number) => `${Messages.SESSION_LIMIT}: this edge node holds ${max} agent sessions, the most it takes`,
  account: (max: number) => `${Messages.SESSION_LIMIT}: this account already holds ${max} agent sessions on this edge node`,
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
