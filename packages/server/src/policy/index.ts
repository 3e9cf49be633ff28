// The policy room: a tunnel's rules on the request path (today its access rules: basic auth and
// IP rules), compiled from what an agent's bind asked for and checked for every visitor by the
// edge and by the cluster's relay. A leaf: it may use no other server folder.
export { AccessCheck, authorizationOf, compilePolicy, type Denial } from './access-check.js';
export { BLOCK_MS, MAX_AUTHORIZATION_LENGTH, MAX_FAILURES, decodeBasic } from './basic-auth.js';
export { IpRules } from './ip-rules.js';
