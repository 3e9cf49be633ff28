import {
  ErrorCode,
  MAX_ALLOW_RULES,
  MAX_BASIC_AUTH_USERS,
  allowDomainProblem,
  allowEmailProblem,
  oidcNameProblem,
  SvcError,
  cidrProblem,
  hashPassword,
  parseBasicAuthPair,
  policyProblem,
  type TrafficPolicy,
  type TunnelPolicy,
} from '@svcrouter/protocol';
import { TRAFFIC_OPTION_KEYS, trafficPolicy, trafficProblem, type TrafficOptions } from './traffic-options.js';

/**
 * A tunnel's policy as a caller gives it (forward(), the agent's flags and config file): the
 * access rules and the traffic rules (traffic-options.ts) as flat keys, or all of them in one
 * `policy` block; a key given both ways is refused. `buildPolicy` compiles either into the one
 * TunnelPolicy a bind carries.
 */
export interface AccessOptions extends AccessRuleOptions, TrafficOptions {
  /** Every policy key in one block (as a config file's `policy:`), instead of the flat keys. */
  policy?: PolicyBlock;
}

/** Every key a `policy` block may hold. */
export type PolicyBlock = AccessRuleOptions & TrafficOptions;

/** The access rules as a caller gives them. */
export interface AccessRuleOptions {
  /** `user:password` pairs (at most 10; passwords of 8 to 128 characters): visitors must sign in with one. */
  basicAuth?: string | readonly string[];
  /** CIDRs or addresses allowed; with a list, every other address gets 403. */
  cidrAllow?: string | readonly string[];
  /** CIDRs or addresses denied (403); deny wins over allow. */
  cidrDeny?: string | readonly string[];
  /** Visitors sign in with this OpenID Connect provider (a name the server's operator configured). */
  oidc?: string;
  /** With oidc: emails allowed in; with neither this nor allowDomain, every signed-in visitor is. */
  allowEmail?: string | readonly string[];
  /** With oidc: email domains allowed in (`example.com`). */
  allowDomain?: string | readonly string[];
}

/**
 * Why the access options are not valid, as `key: message`, or undefined. Checked before anything
 * is dialled or hashed, so a typo fails at once.
 */
export function accessProblem(given: AccessOptions): string | undefined {
  const options = mergedPolicy(given);
  if (typeof options === 'string') return options;
  const pairs = list(options.basicAuth);
  if (pairs.length > MAX_BASIC_AUTH_USERS) return `basicAuth: at most ${MAX_BASIC_AUTH_USERS} user:password pairs`;
  const users = new Set<string>();
  for (const pair of pairs) {
    const parsed = parseBasicAuthPair(pair);
    if (typeof parsed === 'string') return `basicAuth: ${parsed}`;
    if (users.has(parsed.user)) return `basicAuth: user "${parsed.user}" is given twice`;
    users.add(parsed.user);
  }
  for (const key of ['cidrAllow', 'cidrDeny'] as const) {
    for (const cidr of list(options[key])) {
      const problem = cidrProblem(cidr);
      if (problem) return `${key}: ${problem}`;
    }
  }
  return oidcProblem(options, pairs.length > 0) ?? trafficProblem(options);
}

/** The flat keys and the `policy` block as one set of keys; a key given both ways is a problem. */
export function mergedPolicy(options: AccessOptions): PolicyBlock | string {
  const block = options.policy;
  if (block === undefined) return options;
  if (typeof block !== 'object' || block === null || Array.isArray(block)) return 'policy: expected an object of policy keys';
  const merged: Record<string, unknown> = { ...options };
  delete merged.policy;
  for (const [key, value] of Object.entries(block)) {
    if (value === undefined) continue;
    if (!POLICY_KEYS.has(key)) return `policy: unknown key "${key}"`;
    if (merged[key] !== undefined) return `${key}: given both as a key of its own and in policy`;
    merged[key] = value;
  }
  return merged as PolicyBlock;
}

const POLICY_KEYS: ReadonlySet<string> = new Set([
  'basicAuth',
  'cidrAllow',
  'cidrDeny',
  'oidc',
  'allowEmail',
  'allowDomain',
  ...TRAFFIC_OPTION_KEYS,
]);

function oidcProblem(options: AccessOptions, basicAuth: boolean): string | undefined {
  if (options.oidc !== undefined) {
    const problem = oidcNameProblem(options.oidc);
    if (problem) return `oidc: ${problem}`;
    if (basicAuth) return 'oidc: cannot be combined with basicAuth';
  }
  for (const [key, problemOf] of [
    ['allowEmail', allowEmailProblem],
    ['allowDomain', allowDomainProblem],
  ] as const) {
    const entries = list(options[key]);
    if (entries.length > 0 && options.oidc === undefined) return `${key}: needs oidc (the provider visitors sign in with)`;
    if (entries.length > MAX_ALLOW_RULES) return `${key}: at most ${MAX_ALLOW_RULES} entries`;
    for (const entry of entries) {
      const problem = problemOf(entry);
      if (problem) return `${key}: ${problem}`;
    }
  }
  return undefined;
}

/**
 * The policy a bind carries for these options (passwords hashed with scrypt and a fresh salt, so
 * they never leave this process in clear), or undefined when there are no rules. Throws
 * SvcError POLICY_INVALID for bad options.
 */
export async function buildPolicy(given: AccessOptions): Promise<TunnelPolicy | undefined> {
  const problem = accessProblem(given);
  if (problem !== undefined) throw new SvcError(ErrorCode.POLICY_INVALID, problem);
  const options = mergedPolicy(given) as PolicyBlock;
  // Checked by accessProblem: the wire form of the traffic keys.
  const policy: TunnelPolicy = { ...(trafficPolicy(options) as TrafficPolicy) };
  const pairs = list(options.basicAuth);
  if (pairs.length > 0) {
    policy.basicAuth = await Promise.all(
      pairs.map(async (pair) => {
        const { user, password } = parseBasicAuthPair(pair) as { user: string; password: string };
        return { user, hash: await hashPassword(password) };
      }),
    );
  }
  const allow = list(options.cidrAllow);
  if (allow.length > 0) policy.cidrAllow = allow;
  const deny = list(options.cidrDeny);
  if (deny.length > 0) policy.cidrDeny = deny;
  if (options.oidc !== undefined) policy.oidc = options.oidc;
  const emails = list(options.allowEmail);
  if (emails.length > 0) policy.allowEmail = emails;
  const domains = list(options.allowDomain);
  if (domains.length > 0) policy.allowDomain = domains;
  if (Object.keys(policy).length === 0) return undefined;
  const invalid = policyProblem(policy);
  if (invalid !== undefined) throw new SvcError(ErrorCode.POLICY_INVALID, invalid);
  return policy;
}

/** Splits a comma-separated variable (SVC_BASIC_AUTH, SVC_CIDR_ALLOW…) into its entries; empty: none. */
export function splitList(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

function list(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : [...value];
}
