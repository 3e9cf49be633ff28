// The policy room: a tunnel's rules on the request path (today its access rules: basic auth, IP
// rules and single sign-on), compiled from what an agent's bind asked for and checked for every
// visitor by the edge and by the cluster's relay. A leaf: it may use no other server folder; the
// sign-in itself reaches it through the SignIn interface.
export { AccessCheck, authorizationOf, compilePolicy, type Denial, type Verdict } from './access-check.js';
export { BLOCK_MS, MAX_AUTHORIZATION_LENGTH, MAX_FAILURES, decodeBasic } from './basic-auth.js';
export { IpRules } from './ip-rules.js';
export type { AccessRequest, Identity, Reply, SignIn, SignInRules } from './sign-in.js';
export { EdgeRules, type RuleOutcome, type RuleRequest } from './edge-rules.js';
export { HeaderRules, headerRules } from './header-rules.js';
export { LocalRateLimiter, MAX_LIMITER_KEYS, type RateLimit, type RateLimiter } from './rate-limiter.js';
export { ClusterRateLimiter, type SharedRateCounter } from './cluster-rate-limiter.js';
export { TrafficRules, compileTraffic, type TrafficDeps } from './traffic-rules.js';
export {
  verifyWebhookSignature,
  webhookSecretProblem,
  type SignedRequest,
  type WebhookFailure,
  type WebhookProvider,
} from './webhook-signatures.js';
