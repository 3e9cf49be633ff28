import { hasRules, type TunnelPolicy } from '@svcrouter/protocol';
import { BasicAuth } from './basic-auth.js';
import { IpRules } from './ip-rules.js';

/** Why a visitor request was refused: 401 (credentials), 403 (address), 429 (too many failed attempts). */
export type Denial = 401 | 403 | 429;

/**
 * The rules of one tunnel, ready for the request path: made once per bind from its policy, then
 * asked once per visitor request before anything is sent to the agent. A tunnel without rules
 * has no AccessCheck at all, so it pays nothing.
 */
export class AccessCheck {
  private readonly ip: IpRules | undefined;
  private readonly basic: BasicAuth | undefined;
  /** The edge consumes the visitor's Authorization header: it is not forwarded to the agent. */
  readonly consumesAuthorization: boolean;

  constructor(policy: TunnelPolicy) {
    this.ip = policy.cidrAllow !== undefined || policy.cidrDeny !== undefined ? new IpRules(policy.cidrAllow, policy.cidrDeny) : undefined;
    this.basic = policy.basicAuth !== undefined ? new BasicAuth(policy.basicAuth) : undefined;
    this.consumesAuthorization = this.basic !== undefined;
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
}

function denialOf(verdict: 'ok' | 'unauthorized' | 'limited'): Denial | undefined {
  return verdict === 'ok' ? undefined : verdict === 'limited' ? 429 : 401;
}

/** The check of a policy, or undefined when it has no rules. */
export function compilePolicy(policy: TunnelPolicy | undefined): AccessCheck | undefined {
  return hasRules(policy) ? new AccessCheck(policy) : undefined;
}

/** The value of the first Authorization header in flat name/value pairs (raw headers, a request head's `h`). */
export function authorizationOf(pairs: readonly string[]): string | undefined {
  for (let i = 0; i < pairs.length; i += 2) {
    const name = pairs[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') return pairs[i + 1];
  }
  return undefined;
}
