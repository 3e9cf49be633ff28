import { randomBytes, scrypt } from 'node:crypto';
import { isIP } from 'node:net';
import { hasTrafficRules, TRAFFIC_KEYS, trafficPolicyProblem, type TrafficPolicy } from './traffic-policy.js';

/*
 * A tunnel's policy: the rules the edge applies to every visitor request before it reaches the
 * agent. It travels with the bind (an optional `policy` on the bind message), is checked by
 * `policyProblem` on both sides, and is stored with the tunnel so every edge node applies it.
 * Access rules come first; later rules join this one object.
 */

/** One basic-auth user: the name in clear, the password only as a salted scrypt hash (PASSWORD_HASH_PREFIX…). */
export interface BasicAuthUser {
  user: string;
  hash: string;
}

/** A tunnel's policy as it travels in the bind message and is stored. Every field is optional; none at all: no rules. */
export interface TunnelPolicy extends TrafficPolicy {
  /** Visitors must send one of these users with its password (HTTP Basic). */
  basicAuth?: BasicAuthUser[];
  /** CIDRs (or single addresses) allowed; with a list, every other address is denied. */
  cidrAllow?: string[];
  /** CIDRs (or single addresses) denied; deny wins over allow. */
  cidrDeny?: string[];
  /** Visitors sign in with this OpenID Connect provider (a name from the server's SVC_OIDC_PROVIDERS). */
  oidc?: string;
  /** With oidc: signed-in emails allowed (compared case-insensitively). */
  allowEmail?: string[];
  /** With oidc: email domains allowed (`example.com` admits `a@example.com`, not `a@sub.example.com`). */
  allowDomain?: string[];
}

/** What `GET /v1/tunnels` shows of a policy: no secrets. */
export interface AccessSummary {
  basicAuth: string[];
  cidrAllow: string[];
  cidrDeny: string[];
  /** The OIDC provider's name, or null without single sign-on. */
  oidc: string | null;
  allowEmail: string[];
  allowDomain: string[];
}

/** Most basic-auth users per tunnel. */
export const MAX_BASIC_AUTH_USERS = 10;
/** Password length bounds, in characters. */
export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 128;
/** Longest user name, in characters. */
export const MAX_USER_LENGTH = 64;
/** Most entries in each of cidrAllow and cidrDeny. */
export const MAX_CIDRS = 100;
/** Most entries in each of allowEmail and allowDomain. */
export const MAX_ALLOW_RULES = 100;
/** An OIDC provider's name: how the server's SVC_OIDC_PROVIDERS and a bind's `oidc` spell it. */
export const OIDC_NAME_SHAPE = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const EMAIL_SHAPE = /^[^\s@",;<>()\\]{1,64}@[a-z0-9](?:[a-z0-9-]{0,62}\.)*[a-z0-9-]{1,63}$/i;
const DOMAIN_SHAPE = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,62}\.)*[a-z0-9-]{1,63}$/i;

/**
 * scrypt parameters, fixed in the hash's prefix: an edge accepts only these, so a bind cannot
 * make it spend unbounded memory or time per check (16 MiB, some tens of ms per hash).
 */
const SCRYPT_N = 16384;
const SCRYPT_R = 8;
const SCRYPT_P = 1;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** Prefix of every password hash: the algorithm and its parameters. */
export const PASSWORD_HASH_PREFIX = `scrypt$${SCRYPT_N}$${SCRYPT_R}$${SCRYPT_P}$`;
const HASH_SHAPE = /^scrypt\$16384\$8\$1\$([A-Za-z0-9_-]{22})\$([A-Za-z0-9_-]{43})$/;

/** Hashes a password with a fresh salt, in the format a policy carries. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await scryptKey(Buffer.from(password, 'utf8'), salt);
  return `${PASSWORD_HASH_PREFIX}${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** The salt and key of a well-formed hash, or undefined. */
export function parsePasswordHash(hash: string): { salt: Buffer; key: Buffer } | undefined {
  const match = HASH_SHAPE.exec(hash);
  if (!match) return undefined;
  return { salt: Buffer.from(match[1]!, 'base64url'), key: Buffer.from(match[2]!, 'base64url') };
}

/** scrypt of a password under a salt with the fixed parameters (off the event loop). */
export function scryptKey(password: Buffer, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, KEY_BYTES, { N: SCRYPT_N, r: SCRYPT_R, p: SCRYPT_P }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** Splits a `user:password` pair as typed by a person; answers the problem as a sentence. */
export function parseBasicAuthPair(pair: string): { user: string; password: string } | string {
  const colon = pair.indexOf(':');
  if (colon < 0) return 'expected user:password';
  const user = pair.slice(0, colon);
  const password = pair.slice(colon + 1);
  const userProblem = basicAuthUserProblem(user);
  if (userProblem) return userProblem;
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH || length > MAX_PASSWORD_LENGTH) {
    return `the password of "${user}" must have ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`;
  }
  return { user, password };
}

function basicAuthUserProblem(user: string): string | undefined {
  if (user.length === 0) return 'a user name is required before the colon';
  if ([...user].length > MAX_USER_LENGTH || /[\x00-\x1f\x7f:]/.test(user)) {
    return `invalid user name: 1 to ${MAX_USER_LENGTH} characters, no colon or control characters`;
  }
  return undefined;
}

/** Why a CIDR (or a single address) is not one, or undefined when it is. */
export function cidrProblem(value: string): string | undefined {
  if (typeof value !== 'string') return 'expected a CIDR such as 203.0.113.0/24 or 2001:db8::/32';
  // Refused rather than trimmed: a stored rule is exactly what was given.
  if (value.trim() !== value) return `${JSON.stringify(value)} has whitespace around it; give the CIDR without it`;
  const slash = value.indexOf('/');
  const address = slash < 0 ? value : value.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return `"${value}" is not an IPv4 or IPv6 address or CIDR`;
  // A zone ID names an interface of the machine that wrote it; the edge matches peers by address alone.
  const zone = address.indexOf('%');
  if (zone >= 0) return `"${value}": a zone ID (${address.slice(zone)}) has no meaning at the edge; give the address without it`;
  if (slash < 0) return undefined;
  const prefix = value.slice(slash + 1);
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return `"${value}": the prefix length must be 0 to ${max}`;
  return undefined;
}

/** Why a value is not an email address an allow rule can hold, or undefined. */
export function allowEmailProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || !EMAIL_SHAPE.test(value))
    return `${JSON.stringify(value)} is not an email address such as a@example.com`;
  return undefined;
}

/** Why a value is not an email domain an allow rule can hold, or undefined. */
export function allowDomainProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || !DOMAIN_SHAPE.test(value)) return `${JSON.stringify(value)} is not a domain such as example.com`;
  return undefined;
}

/** Why a value is not an OIDC provider name, or undefined. */
export function oidcNameProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || !OIDC_NAME_SHAPE.test(value)) {
    return 'expected a provider name: lower-case letters, digits, - and _, at most 32 characters';
  }
  return undefined;
}

/**
 * Why a value received as a policy is not a valid one, as `key: message`, or undefined. Both the
 * agent (before sending) and the edge (on every bind, since the agent is not trusted) ask.
 */
export function policyProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'policy: expected an object';
  const policy = value as Record<string, unknown>;
  for (const key of Object.keys(policy)) {
    if (!RULE_KEYS.has(key)) return `policy: unknown rule "${key}"`;
  }
  if (policy.basicAuth !== undefined) {
    const users = policy.basicAuth;
    if (!Array.isArray(users) || users.length === 0) return 'basicAuth: expected a non-empty list of users';
    if (users.length > MAX_BASIC_AUTH_USERS) return `basicAuth: at most ${MAX_BASIC_AUTH_USERS} users`;
    const seen = new Set<string>();
    for (const entry of users as unknown[]) {
      const { user, hash } = (entry ?? {}) as Partial<BasicAuthUser>;
      if (typeof user !== 'string' || typeof hash !== 'string') return 'basicAuth: each entry is {user, hash}';
      const problem = basicAuthUserProblem(user);
      if (problem) return `basicAuth: ${problem}`;
      if (seen.has(user)) return `basicAuth: user "${user}" is given twice`;
      seen.add(user);
      if (!parsePasswordHash(hash)) return `basicAuth: the password of "${user}" is not a ${PASSWORD_HASH_PREFIX}… hash`;
    }
  }
  for (const key of ['cidrAllow', 'cidrDeny'] as const) {
    const list = policy[key];
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.length === 0) return `${key}: expected a non-empty list of CIDRs`;
    if (list.length > MAX_CIDRS) return `${key}: at most ${MAX_CIDRS} entries`;
    for (const cidr of list as unknown[]) {
      const problem = cidrProblem(cidr as string);
      if (problem) return `${key}: ${problem}`;
    }
  }
  return oidcRulesProblem(policy) ?? trafficPolicyProblem(policy);
}

const RULE_KEYS = new Set<string>(['basicAuth', 'cidrAllow', 'cidrDeny', 'oidc', 'allowEmail', 'allowDomain', ...TRAFFIC_KEYS]);

function oidcRulesProblem(policy: Record<string, unknown>): string | undefined {
  if (policy.oidc !== undefined) {
    const problem = oidcNameProblem(policy.oidc);
    if (problem) return `oidc: ${problem}`;
    // Two sign-ins would each answer the browser their own way: one per tunnel.
    if (policy.basicAuth !== undefined) return 'oidc: cannot be combined with basicAuth';
  }
  for (const [key, problemOf] of [
    ['allowEmail', allowEmailProblem],
    ['allowDomain', allowDomainProblem],
  ] as const) {
    const list = policy[key];
    if (list === undefined) continue;
    if (policy.oidc === undefined) return `${key}: needs oidc (the provider visitors sign in with)`;
    if (!Array.isArray(list) || list.length === 0) return `${key}: expected a non-empty list`;
    if (list.length > MAX_ALLOW_RULES) return `${key}: at most ${MAX_ALLOW_RULES} entries`;
    for (const entry of list as unknown[]) {
      const problem = problemOf(entry);
      if (problem) return `${key}: ${problem}`;
    }
  }
  return undefined;
}

/** Whether a policy has any rule at all (an empty object is the same as none). */
export function hasRules(policy: TunnelPolicy | undefined): policy is TunnelPolicy {
  return hasAccessRules(policy) || hasTrafficRules(policy);
}

/** Whether a policy has an access rule (basic auth, IP rules, single sign-on). */
export function hasAccessRules(policy: TunnelPolicy | undefined): policy is TunnelPolicy {
  return (
    policy !== undefined &&
    (policy.basicAuth !== undefined || policy.cidrAllow !== undefined || policy.cidrDeny !== undefined || policy.oidc !== undefined)
  );
}

/** A policy's rules without secrets: user names, CIDRs. */
export function accessSummary(policy: TunnelPolicy | undefined): AccessSummary {
  return {
    basicAuth: policy?.basicAuth?.map((entry) => entry.user) ?? [],
    cidrAllow: [...(policy?.cidrAllow ?? [])],
    cidrDeny: [...(policy?.cidrDeny ?? [])],
    oidc: policy?.oidc ?? null,
    allowEmail: [...(policy?.allowEmail ?? [])],
    allowDomain: [...(policy?.allowDomain ?? [])],
  };
}
