import { hasAccessRules, type TunnelPolicy } from '@svcrouter/protocol';
import { BasicAuth, type AuthVerdict } from './basic-auth.js';
import { IpRules } from './ip-rules.js';
import type { AccessRequest, Identity, Reply, SignIn, SignInRules } from './sign-in.js';

/**
 * Why a visitor request was refused: 401 (credentials), 403 (address), 429 (too many failed
 * attempts), 503 (too many new credentials being checked at once).
 */
export type Denial = 401 | 403 | 429 | 503;

/** What the rules say of one request: pass as is (undefined), a denial page, a whole reply, or pass with an identity. */
export type Verdict = undefined | Denial | Reply | Identity;

/**
 * The rules of one tunnel, ready for the request path: made once per bind from its policy, then
 * asked once per visitor request before anything is sent to the agent. A tunnel without rules
 * has no AccessCheck at all, so it pays nothing.
 */
export class AccessCheck {
  private readonly ip: IpRules | undefined;
  private readonly basic: BasicAuth | undefined;
  private readonly signIn: { gate: SignIn; rules: SignInRules } | undefined;
  /** The edge consumes the visitor's Authorization header: it is not forwarded to the agent. */
  readonly consumesAuthorization: boolean;
  /** Single sign-on is on: `admit` needs the whole request; otherwise `checkHeaders` says the same for less. */
  readonly signsIn: boolean;

  constructor(policy: TunnelPolicy, signIn?: SignIn, owner = '') {
    this.ip = policy.cidrAllow !== undefined || policy.cidrDeny !== undefined ? new IpRules(policy.cidrAllow, policy.cidrDeny) : undefined;
    this.basic = policy.basicAuth !== undefined ? new BasicAuth(policy.basicAuth) : undefined;
    this.consumesAuthorization = this.basic !== undefined;
    // The binder refuses a provider that is not configured, so a gate is always there for one.
    if (policy.oidc !== undefined && signIn !== undefined) {
      const lower = (list: readonly string[] | undefined) => new Set((list ?? []).map((entry) => entry.toLowerCase()));
      this.signIn = {
        gate: signIn,
        rules: { provider: policy.oidc, owner, emails: lower(policy.allowEmail), domains: lower(policy.allowDomain) },
      };
    }
    this.signsIn = this.signIn !== undefined;
  }

  /**
   * The denial for a visitor at `ip` sending `authorization`, or undefined to let it pass. The
   * address rules come first: a denied address never gets to try credentials. A promise only
   * when credentials are checked for the first time (scrypt runs off the event loop).
   */
  check(ip: string, authorization: string | undefined): Denial | undefined | Promise<Denial | undefined> {
    if (this.ip !== undefined && !this.ip.admits(ip)) return 403;
    if (this.basic === undefined) return undefined;
    const verdict = this.basic.check(ip, authorization, Date.now());
    return typeof verdict === 'string' ? denialOf(verdict) : verdict.then(denialOf);
  }

  /** `check` for a visitor's flat header pairs: the rules of a tunnel without single sign-on, without building a request. */
  checkHeaders(ip: string, headers: readonly string[]): Denial | undefined | Promise<Denial | undefined> {
    return this.check(ip, this.consumesAuthorization ? authorizationOf(headers) : undefined);
  }

  /**
   * Every rule for one request: the address and basic-auth rules (`check`), then single sign-on,
   * which answers an identity to forward with or a reply of its own.
   */
  admit(request: AccessRequest): Verdict | Promise<Verdict> {
    const first = this.checkHeaders(request.ip, request.headers);
    if (this.signIn === undefined || first !== undefined) return first;
    return this.signIn.gate.admit(request, this.signIn.rules);
  }
}

const DENIALS: Readonly<Record<AuthVerdict, Denial | undefined>> = { ok: undefined, unauthorized: 401, limited: 429, busy: 503 };

function denialOf(verdict: AuthVerdict): Denial | undefined {
  return DENIALS[verdict];
}

/** The check of a policy of a tunnel of account `owner`, or undefined when it has no rules. */
export function compilePolicy(policy: TunnelPolicy | undefined, signIn?: SignIn, owner?: string): AccessCheck | undefined {
  return hasAccessRules(policy) ? new AccessCheck(policy, signIn, owner) : undefined;
}

/** The value of the first Authorization header in flat name/value pairs (raw headers, a request head's `h`). */
export function authorizationOf(pairs: readonly string[]): string | undefined {
  for (let i = 0; i < pairs.length; i += 2) {
    const name = pairs[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') return pairs[i + 1];
  }
  return undefined;
}
