import { BindMessages, ErrorCode, Messages, SvcError, type ErrorCodeValue } from '@svcrouter/protocol';

/** A failure as the agent prints it: one sentence, then one hint saying what to do about it. */
export interface Failure {
  sentence: string;
  hint: string;
}

/** What to do next, by error code; codes without an entry fall back to GENERIC_HINT. */
const HINTS: Partial<Record<ErrorCodeValue, string>> = {
  [ErrorCode.TOKEN_INVALID]:
    'set SVC_TOKEN to an agent token (svc_…) exactly as it was printed: from the first start of svc-server, `svc-server account create`, or POST /v1/keys',
  [ErrorCode.TUNNEL_LIMIT]:
    "stop one of this account's other tunnels (GET /v1/tunnels lists them, DELETE /v1/tunnels/<id> ends one), or move the account to a plan with more tunnels",
  [ErrorCode.SESSION_LIMIT]:
    "stop some of this account's other agents, or ask the operator of svc-server to raise SVC_MAX_SESSIONS or SVC_MAX_ACCOUNT_SESSIONS",
  [ErrorCode.BANDWIDTH_LIMIT]:
    "this month's transfer of the plan is used up (GET /v1/usage shows it); it resets on the first of the month, or move the account to a larger plan",
  [ErrorCode.NAME_TAKEN]: 'pick another name with --subdomain or SVC_SUBDOMAIN, or leave it out for a random one',
  // NAME_INVALID covers every option refused before or at the bind (address, routes, TLS files, …), not only names.
  [ErrorCode.NAME_INVALID]:
    'correct what the line above names (a flag, an SVC_* variable or a key of svc.yml); running svc again unchanged gets the same answer',
  [ErrorCode.NAME_RESERVED]: 'pick another name with --subdomain or SVC_SUBDOMAIN, or leave it out for a random one',
  [ErrorCode.DOMAIN_NOT_VERIFIED]:
    "the dashboard's Domains page (or GET /v1/domains) shows the TXT record to publish; leave SVC_DOMAIN unset to use the shared domain meanwhile",
  [ErrorCode.EDGE_UNREACHABLE]:
    'check SVC_SERVER and that svc-server is running and reachable from here (an https edge with a dev certificate also needs SVC_CA_FILE)',
  [ErrorCode.SESSION_CLOSED]: 'the edge went away; run svc again once it is back',
  // Every POLICY_INVALID refusal is decided by what the bind carries, so a retry as it is gets it again.
  // The other sentence of this code, every port in use, has its own hint (SENTENCE_HINTS).
  [ErrorCode.TCP_PORT_UNAVAILABLE]:
    'name a port inside the range with --remote-addr, or leave it out for a port at random; the operator of svc-server sets the range with SVC_TCP_PORTS',
  [ErrorCode.POLICY_INVALID]:
    'change what the line above names (the access rules given with --basic-auth, --cidr-allow, --cidr-deny, --oidc or svc.yml, or the svc-server version); running svc again unchanged gets the same answer',
};

/**
 * Hints for refusals that share their code with others but call for something else, told apart
 * by the catalog's own sentence (the part after the name, which is where each one varies).
 */
const SENTENCE_HINTS: ReadonlyArray<readonly [ending: string, hint: string]> = [
  [
    BindMessages.policyRequired(''),
    "give svc the tunnel's access rules (GET /v1/tunnels shows them), or stop the agent serving it, or release it with DELETE /v1/tunnels/<id>; running svc again unchanged gets the same answer",
  ],
  [BindMessages.poolMismatch('', true), 'add --pool to serve the name beside its other agents, or stop them first'],
  [BindMessages.poolMismatch('', false), 'stop the agent serving the name, or run svc without --pool to take the name over'],
  [BindMessages.poolUnsupported, 'upgrade svc-server to pool tunnels, or run svc without --pool'],
  [
    Messages.TCP_PORT_UNAVAILABLE,
    "every port of the edge's TCP range is in use: stop another TCP tunnel (GET /v1/tunnels lists the account's), or ask the operator of svc-server to widen SVC_TCP_PORTS",
  ],
  // TCP addresses are ports, not names: --subdomain does not apply to them.
  [
    BindMessages.tcpAddressNotYours(''),
    "GET /v1/tcp-addresses lists the account's reserved addresses; or leave --remote-addr out for a port at random",
  ],
  [
    BindMessages.tcpAddressTaken(''),
    "wait for the tunnel that holds the port to end (GET /v1/tunnels lists the account's own), or leave --remote-addr out for a port at random",
  ],
];

/** Hints by the start of the sentence, for a refusal whose varying part comes last. */
const PREFIX_HINTS: ReadonlyArray<readonly [start: string, hint: string]> = [
  [
    BindMessages.subdomainInvalid('').split('"')[0]!,
    'give --subdomain or SVC_SUBDOMAIN one DNS label (1-63 letters, digits or inner hyphens), or leave it out for a random name',
  ],
];

const GENERIC_HINT = 'run svc again; if it keeps failing, the server log says more';

/** The sentence and hint for a failure to start or keep a tunnel. */
export function explainFailure(error: unknown): Failure {
  if (error instanceof SvcError) {
    const bySentence =
      SENTENCE_HINTS.find(([ending]) => error.message.endsWith(ending))?.[1] ??
      PREFIX_HINTS.find(([start]) => error.message.startsWith(start))?.[1];
    return { sentence: error.message, hint: bySentence ?? HINTS[error.code] ?? GENERIC_HINT };
  }
  const detail = error instanceof Error ? error.message : String(error);
  return { sentence: `cannot start the tunnel: ${detail}`, hint: GENERIC_HINT };
}

/** The sentence and hint for an SVC_CA_FILE that cannot be used. */
export function caFileFailure(path: string, error: NodeJS.ErrnoException | undefined): Failure {
  const why = error === undefined ? 'it holds no PEM certificate' : (error.code ?? error.message);
  return {
    sentence: `cannot use SVC_CA_FILE ${path}: ${why}`,
    hint: 'point SVC_CA_FILE at a readable PEM file (such as svc-data/dev-ca/ca.crt), or unset it for an edge with a public certificate',
  };
}

/**
 * The sentence and hint for a local target where nothing listens (a warning: the tunnel still
 * starts). `raw`: a TCP or TLS tunnel, whose visitors get no page: the edge closes their connection.
 */
export function notListeningWarning(local: string, code: string, raw = false): Failure {
  const meanwhile = raw ? "each visitor's connection is closed at once" : 'visitors get a 502 page';
  return {
    sentence: `warning: nothing answers at ${local} yet (${code}); ${meanwhile} until it does`,
    hint: 'start the local service, or check the port given to svc',
  };
}

/** Formats a failure as the two lines the agent prints. */
export function formatFailure(failure: Failure): string {
  return `${failure.sentence}\nhint: ${failure.hint}`;
}
