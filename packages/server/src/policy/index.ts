export { AccessCheck, authorizationOf, compilePolicy, type Denial } from './access-check.js';
export { BLOCK_MS, MAX_AUTHORIZATION_LENGTH, MAX_FAILURES, decodeBasic } from './basic-auth.js';
export { IpRules } from './ip-rules.js';
