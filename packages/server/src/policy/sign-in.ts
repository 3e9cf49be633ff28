/*
 * What the access rules ask of single sign-on. The policy room only knows this shape; the sign-in
 * itself (providers, keys, tickets in the store) lives in oidc/ and is handed to the binder.
 */

/** A visitor request as the access rules see it, on the node holding the tunnel's agent. */
export interface AccessRequest {
  /** The visitor's own address (socket peer, PROXY protocol, or the entry node's). */
  ip: string;
  /** Flat name/value pairs of the visitor's headers. */
  headers: readonly string[];
  method: string;
  /** The request target: path and query. */
  path: string;
  /** The routed, normalised host (no port). */
  host: string;
  /** The visitor came over TLS. */
  secure: boolean;
}

/** A whole answer made by the rules instead of the origin's (a redirect, a JSON 401, a page). */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A signed-in, allowed visitor: what the forwarded request carries to the local service. */
export interface Identity {
  /** X-Svc-Identity: a short-lived JWT signed by the server. */
  token: string;
  /** X-Forwarded-Email. */
  email: string;
}

/** A tunnel's sign-in rules, from its policy. */
export interface SignInRules {
  provider: string;
  /** The account the tunnel belongs to now: a session made while another account held the host is no session. */
  owner: string;
  /** Lower-cased allowed emails and domains; both empty: every signed-in visitor. */
  emails: ReadonlySet<string>;
  domains: ReadonlySet<string>;
}

/** Single sign-on as the request path uses it. */
export interface SignIn {
  /** The names of the configured providers (a bind naming another is refused). */
  readonly providers: readonly string[];
  /**
   * The answer for a request on a tunnel with these rules: an Identity to forward with, or a
   * Reply (sign-in redirect, 401, 403, the sign-in's own paths). A promise only when the store or
   * the provider is asked (starting or finishing a sign-in).
   */
  admit(request: AccessRequest, rules: SignInRules): Identity | Reply | Promise<Identity | Reply>;
}
