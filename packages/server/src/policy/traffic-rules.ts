import { hasTrafficRules, type TunnelPolicy, type VerifyWebhookRule } from '@svcrouter/protocol';
import { EdgeRules, type RuleOutcome, type RuleRequest } from './edge-rules.js';
import { headerRules, type HeaderRules } from './header-rules.js';
import type { RateLimit, RateLimiter } from './rate-limiter.js';

/** What the traffic rules are compiled with: the limiter counting requests (this node's, or the cluster's). */
export interface TrafficDeps {
  limiter: RateLimiter;
}

/**
 * The traffic rules of one tunnel, ready for the request path: made once per bind, asked after
 * the access rules let a request in. Each step is undefined when the policy does not use it, so
 * a request pays only for the steps its tunnel has; a tunnel without traffic rules has no
 * TrafficRules at all.
 */
export class TrafficRules {
  readonly rateLimit: RateLimit | undefined;
  readonly rules: EdgeRules | undefined;
  readonly verifyWebhook: VerifyWebhookRule | undefined;
  readonly requestHeaders: HeaderRules | undefined;
  readonly responseHeaders: HeaderRules | undefined;

  constructor(
    policy: TunnelPolicy,
    private readonly deps: TrafficDeps,
  ) {
    this.rateLimit = policy.rateLimit;
    this.rules = policy.rules !== undefined ? new EdgeRules(policy.rules) : undefined;
    this.verifyWebhook = policy.verifyWebhook;
    this.requestHeaders = headerRules(policy.requestHeaderAdd, policy.requestHeaderRemove);
    this.responseHeaders = headerRules(policy.responseHeaderAdd, policy.responseHeaderRemove);
  }

  /**
   * Counts one request of the visitor at `ip` on `hostname`: true within the limit (or without
   * one), else the seconds to wait. A promise only from a limiter shared by a cluster.
   */
  admitRate(hostname: string, ip: string, nowMs: number): true | number | Promise<true | number> {
    if (this.rateLimit === undefined) return true;
    return this.deps.limiter.take(`${hostname} ${ip}`, this.rateLimit, nowMs);
  }

  /** The edge rules over one request: a reply, a rewritten target, or nothing to do. */
  applyRules(request: RuleRequest): RuleOutcome {
    return this.rules?.evaluate(request);
  }
}

/** The traffic rules of a policy, or undefined when it has none. */
export function compileTraffic(policy: TunnelPolicy | undefined, deps: TrafficDeps): TrafficRules | undefined {
  return hasTrafficRules(policy) ? new TrafficRules(policy!, deps) : undefined;
}
