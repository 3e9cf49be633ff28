/*
 * A tunnel's traffic rules: what the edge does to a request once the access rules let it in, and
 * to the response on its way back. They join the access rules in TunnelPolicy (policy.ts), travel
 * in the bind and are checked by `trafficPolicyProblem` on both sides: the agent is not trusted.
 *
 * Order at the edge: access rules → rateLimit → rules (first answer ends the request; a rewrite
 * continues) → verifyWebhook → request headers → the agent; response headers on the way back.
 */
import { highestReference, referenceProblem, RuleRegex } from './rule-regex.js';

/** Webhook senders whose signatures the edge can check, each as its provider documents it. */
export const WEBHOOK_PROVIDERS = ['github', 'stripe', 'slack', 'shopify', 'twilio', 'standard'] as const;
export type WebhookProvider = (typeof WEBHOOK_PROVIDERS)[number];

/** At most this many requests per visitor address in any window of `windowMs` (a sliding window). */
export interface RateLimitRule {
  count: number;
  windowMs: number;
}

/** Check a webhook's signature before the request reaches the agent. */
export interface VerifyWebhookRule {
  provider: WebhookProvider;
  /** The signing secret, as the provider shows it. Never shown by the API, sealed at rest. */
  secret: string;
  /** Largest body read to check it, in bytes; larger: 413. */
  maxBody: number;
}

/** What a rule matches; every given part must match (none: every request). */
export interface RuleMatch {
  /** A path prefix (`/api` matches `/api` and `/api/x`, not `/apix`). */
  path?: string;
  /** An RE2 regular expression (rule-regex.ts) tested against the path (without the query). */
  pathRegex?: string;
  /** Methods, upper-case; any of them. */
  method?: string[];
  /** A request header: present (no value) or with exactly this value. */
  header?: { name: string; value?: string };
}

/** One edge rule: a match and exactly one action. */
export interface TrafficRule {
  match?: RuleMatch;
  /** Answer with a redirect to `to` (a path or an http(s) URL; `$1`… from pathRegex). */
  redirect?: { to: string; status?: 301 | 302 | 307 | 308 };
  /** Answer from the edge with this response. */
  respond?: { status: number; headers?: Record<string, string>; body?: string };
  /** Replace `from`'s first match in the path by `to` (`$1` references) and go on with the next rules. */
  rewrite?: { from: string; to: string };
}

/** The traffic fields of a TunnelPolicy. Header rules are `Name: value` (add) or `Name` (remove). */
export interface TrafficPolicy {
  requestHeaderAdd?: string[];
  requestHeaderRemove?: string[];
  responseHeaderAdd?: string[];
  responseHeaderRemove?: string[];
  rateLimit?: RateLimitRule;
  verifyWebhook?: VerifyWebhookRule;
  rules?: TrafficRule[];
}

/** What `GET /v1/tunnels` shows of the traffic rules: names, counts and providers, no secrets and no header values. */
export interface TrafficSummary {
  requestHeaderAdd: string[];
  requestHeaderRemove: string[];
  responseHeaderAdd: string[];
  responseHeaderRemove: string[];
  rateLimit: RateLimitRule | null;
  /** The provider only: the secret is never shown. */
  verifyWebhook: { provider: WebhookProvider; maxBody: number } | null;
  /** One line per rule, in order: `GET /old* → redirect 301 /new`. */
  rules: string[];
}

/** The traffic keys a policy may hold, in the order they are documented. */
export const TRAFFIC_KEYS = [
  'requestHeaderAdd',
  'requestHeaderRemove',
  'responseHeaderAdd',
  'responseHeaderRemove',
  'rateLimit',
  'verifyWebhook',
  'rules',
] as const;

/** Most entries in each header list. */
export const MAX_HEADER_RULES = 20;
/** Longest header name and value a header rule may hold. */
export const MAX_HEADER_NAME_LENGTH = 64;
export const MAX_HEADER_VALUE_LENGTH = 1024;
/** Rate limit bounds: 1 to a million requests, in a window of 1 second to 24 hours. */
export const MAX_RATE_COUNT = 1_000_000;
export const MIN_RATE_WINDOW_MS = 1000;
export const MAX_RATE_WINDOW_MS = 86_400_000;
/** Webhook body bounds; the default is 1 MiB. */
export const DEFAULT_WEBHOOK_MAX_BODY = 1024 * 1024;
export const MAX_WEBHOOK_MAX_BODY = 64 * 1024 * 1024;
export const MAX_WEBHOOK_SECRET_LENGTH = 512;
/** Most edge rules per tunnel. */
export const MAX_RULES = 50;
/** Longest path, regex, redirect target and rewrite template. */
export const MAX_RULE_STRING_LENGTH = 2048;
/** Largest body of a `respond` rule, in characters, and most of its headers. */
export const MAX_RESPOND_BODY_LENGTH = 64 * 1024;
export const MAX_RESPOND_HEADERS = 20;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const METHOD = /^[A-Z]{1,20}$/;

/**
 * Headers no rule may add or remove: the forwarding headers the edge sets (the local service
 * trusts them), and the ones that frame the message, which the edge itself owns.
 */
const FORWARDING_HEADER = /^(x-forwarded-.*|x-svc-.*|forwarded|x-real-ip)$/;
const FRAMING_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-connection',
]);

/** Why a header name may not be the subject of a header rule, or undefined. */
export function headerRuleNameProblem(name: string): string | undefined {
  if (name.length === 0 || name.length > MAX_HEADER_NAME_LENGTH || !TOKEN.test(name)) {
    return `"${name.slice(0, MAX_HEADER_NAME_LENGTH)}" is not a header name (1 to ${MAX_HEADER_NAME_LENGTH} letters, digits and -)`;
  }
  const lower = name.toLowerCase();
  if (FORWARDING_HEADER.test(lower)) return `${name} is a forwarding header the edge sets: it cannot be added or removed`;
  if (FRAMING_HEADERS.has(lower)) return `${name} frames the message: the edge sets it, a rule cannot`;
  return undefined;
}

/** Splits `Name: value` of a header-add rule; answers the problem as a sentence. */
export function parseHeaderAdd(entry: unknown): { name: string; value: string } | string {
  if (typeof entry !== 'string') return 'expected "Name: value"';
  const colon = entry.indexOf(':');
  if (colon <= 0) return `"${entry.slice(0, 80)}": expected "Name: value"`;
  const name = entry.slice(0, colon).trim();
  const value = entry.slice(colon + 1).trim();
  const problem = headerRuleNameProblem(name);
  if (problem) return problem;
  // What HTTP lets a field value carry (RFC 9110 §5.5): a character past Latin-1 cannot be
  // sent as one byte, and written as Latin-1 some would turn into CR or LF.
  if (value.length > MAX_HEADER_VALUE_LENGTH || /[^\t\x20-\x7e\x80-\xff]/.test(value)) {
    return `the value of ${name}: at most ${MAX_HEADER_VALUE_LENGTH} characters, printable ASCII or Latin-1 (no control characters; percent-encode others)`;
  }
  return { name, value };
}

/** Parses `100/1m` (s, m, h; `100/30s`, `5/h`) into a rate limit; answers the problem as a sentence. */
export function parseRateLimit(text: string): RateLimitRule | string {
  const match = /^(\d{1,7})\/(\d{0,5})([smh])$/.exec(text.trim());
  if (!match) return `"${text.slice(0, 40)}": expected count/window such as 100/1m (units s, m, h)`;
  const unit = match[3] === 's' ? 1000 : match[3] === 'm' ? 60_000 : 3_600_000;
  const rule = { count: Number(match[1]), windowMs: Number(match[2] || '1') * unit };
  return rateLimitProblem(rule) ?? rule;
}

/** Parses a size such as `1048576`, `512KiB`, `1MiB`, `2MB`; answers the problem as a sentence. */
export function parseSize(text: string): number | string {
  const match = /^(\d{1,12})\s*(B|KiB|KB|k|K|MiB|MB|M)?$/.exec(text.trim());
  if (!match) return `"${text.slice(0, 40)}": expected a size such as 1MiB, 512KiB or 65536`;
  const unit = match[2] ?? 'B';
  const scale = unit === 'B' ? 1 : /^K|^k/.test(unit) ? (unit === 'KB' ? 1000 : 1024) : unit === 'MB' ? 1_000_000 : 1024 * 1024;
  return Number(match[1]) * scale;
}

/** Parses `provider:secret` of --verify-webhook; answers the problem as a sentence. */
export function parseVerifyWebhook(text: string, maxBody = DEFAULT_WEBHOOK_MAX_BODY): VerifyWebhookRule | string {
  const colon = text.indexOf(':');
  if (colon <= 0) return `expected provider:secret, provider one of ${WEBHOOK_PROVIDERS.join(', ')}`;
  const rule = { provider: text.slice(0, colon) as WebhookProvider, secret: text.slice(colon + 1), maxBody };
  return verifyWebhookProblem(rule) ?? rule;
}

function rateLimitProblem(value: unknown): string | undefined {
  const { count, windowMs } = (value ?? {}) as Partial<RateLimitRule>;
  if (typeof value !== 'object' || value === null || Object.keys(value).some((key) => key !== 'count' && key !== 'windowMs')) {
    return 'expected {count, windowMs}';
  }
  if (!Number.isInteger(count) || count! < 1 || count! > MAX_RATE_COUNT) return `the count must be 1 to ${MAX_RATE_COUNT}`;
  if (!Number.isInteger(windowMs) || windowMs! < MIN_RATE_WINDOW_MS || windowMs! > MAX_RATE_WINDOW_MS) {
    return 'the window must be 1s to 24h';
  }
  return undefined;
}

function verifyWebhookProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'expected {provider, secret, maxBody}';
  const { provider, secret, maxBody } = value as Partial<VerifyWebhookRule>;
  if (Object.keys(value).some((key) => key !== 'provider' && key !== 'secret' && key !== 'maxBody')) {
    return 'expected {provider, secret, maxBody}';
  }
  if (!WEBHOOK_PROVIDERS.includes(provider as WebhookProvider)) {
    return `unknown provider "${String(provider).slice(0, 20)}": expected one of ${WEBHOOK_PROVIDERS.join(', ')}`;
  }
  // The secret itself is never part of a message.
  if (typeof secret !== 'string' || secret.length === 0 || secret.length > MAX_WEBHOOK_SECRET_LENGTH || /[\x00-\x1f\x7f]/.test(secret)) {
    return `the secret must have 1 to ${MAX_WEBHOOK_SECRET_LENGTH} characters, no control characters`;
  }
  // Standard Webhooks keys are base64 (after whsec_): anything else could never verify.
  if (provider === 'standard' && !/^(whsec_)?[A-Za-z0-9+/]+={0,2}$/.test(secret))
    return 'a Standard Webhooks secret is whsec_ followed by base64';
  if (!Number.isInteger(maxBody) || maxBody! < 1 || maxBody! > MAX_WEBHOOK_MAX_BODY) {
    return `maxBody must be 1 byte to ${MAX_WEBHOOK_MAX_BODY / 1024 / 1024} MiB`;
  }
  return undefined;
}

/** Why a value is not a list of header-add (`withValue`) or header-remove entries, or undefined. */
function headerListProblem(list: unknown, withValue: boolean): string | undefined {
  if (!Array.isArray(list) || list.length === 0) return 'expected a non-empty list';
  if (list.length > MAX_HEADER_RULES) return `at most ${MAX_HEADER_RULES} entries`;
  for (const entry of list as unknown[]) {
    if (withValue) {
      const parsed = parseHeaderAdd(entry);
      if (typeof parsed === 'string') return parsed;
    } else {
      if (typeof entry !== 'string') return 'expected header names';
      const problem = headerRuleNameProblem(entry);
      if (problem) return problem;
    }
  }
  return undefined;
}

/** Why the traffic fields of a policy are not valid, as `key: message`, or undefined (policyProblem asks). */
export function trafficPolicyProblem(policy: Record<string, unknown>): string | undefined {
  for (const [key, withValue] of [
    ['requestHeaderAdd', true],
    ['requestHeaderRemove', false],
    ['responseHeaderAdd', true],
    ['responseHeaderRemove', false],
  ] as const) {
    if (policy[key] === undefined) continue;
    const problem = headerListProblem(policy[key], withValue);
    if (problem) return `${key}: ${problem}`;
  }
  if (policy.rateLimit !== undefined) {
    const problem = rateLimitProblem(policy.rateLimit);
    if (problem) return `rateLimit: ${problem}`;
  }
  if (policy.verifyWebhook !== undefined) {
    const problem = verifyWebhookProblem(policy.verifyWebhook);
    if (problem) return `verifyWebhook: ${problem}`;
  }
  if (policy.rules !== undefined) {
    const rules = policy.rules;
    if (!Array.isArray(rules) || rules.length === 0) return 'rules: expected a non-empty list';
    if (rules.length > MAX_RULES) return `rules: at most ${MAX_RULES} rules`;
    for (let index = 0; index < rules.length; index++) {
      const problem = ruleProblem(rules[index]);
      if (problem) return `rules[${index}].${problem}`;
    }
  }
  return undefined;
}

/** Whether a policy has any traffic rule. */
export function hasTrafficRules(policy: TrafficPolicy | undefined): boolean {
  if (policy === undefined) return false;
  for (const key of TRAFFIC_KEYS) if (policy[key] !== undefined) return true;
  return false;
}

/** A policy's traffic rules without secrets: header names, the limit, the provider, one line per rule. */
export function trafficSummary(policy: TrafficPolicy | undefined): TrafficSummary {
  const names = (list: string[] | undefined) => (list ?? []).map((entry) => entry.split(':')[0]!.trim());
  const webhook = policy?.verifyWebhook;
  return {
    requestHeaderAdd: names(policy?.requestHeaderAdd),
    requestHeaderRemove: [...(policy?.requestHeaderRemove ?? [])],
    responseHeaderAdd: names(policy?.responseHeaderAdd),
    responseHeaderRemove: [...(policy?.responseHeaderRemove ?? [])],
    rateLimit: policy?.rateLimit ? { count: policy.rateLimit.count, windowMs: policy.rateLimit.windowMs } : null,
    verifyWebhook: webhook ? { provider: webhook.provider, maxBody: webhook.maxBody } : null,
    rules: (policy?.rules ?? []).map(describeRule),
  };
}

/** One line for a rule: its match, then its action. */
export function describeRule(rule: TrafficRule): string {
  const match = rule.match ?? {};
  const parts = [
    ...(match.method ? [match.method.join('|')] : []),
    ...(match.path !== undefined ? [`${match.path}*`] : []),
    ...(match.pathRegex !== undefined ? [`~${match.pathRegex}`] : []),
    ...(match.header ? [match.header.value === undefined ? `${match.header.name}` : `${match.header.name}=…`] : []),
  ];
  const when = parts.length === 0 ? 'every request' : parts.join(' ');
  if (rule.redirect) return `${when} → redirect ${rule.redirect.status ?? 302} ${rule.redirect.to}`;
  if (rule.respond) return `${when} → respond ${rule.respond.status}`;
  if (rule.rewrite) return `${when} → rewrite ${rule.rewrite.from} → ${rule.rewrite.to}`;
  return when;
}

function ruleProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'rule: expected an object';
  const rule = value as Record<string, unknown>;
  for (const key of Object.keys(rule)) {
    if (!['match', 'redirect', 'respond', 'rewrite'].includes(key)) return `${key}: unknown key (match, redirect, respond, rewrite)`;
  }
  const actions = ['redirect', 'respond', 'rewrite'].filter((key) => rule[key] !== undefined);
  if (actions.length !== 1) return 'action: exactly one of redirect, respond, rewrite';
  if (rule.match !== undefined) {
    const problem = matchProblem(rule.match);
    if (problem) return `match.${problem}`;
  }
  if (rule.redirect !== undefined) {
    // `$N` of a redirect comes from pathRegex, which matchProblem found valid (or absent: no groups).
    const pathRegex = (rule.match as RuleMatch | undefined)?.pathRegex;
    const compiled = pathRegex === undefined ? undefined : RuleRegex.compile(pathRegex);
    const groupCount = compiled instanceof RuleRegex ? compiled.groupCount : undefined;
    return actionProblem('redirect', redirectProblem(rule.redirect, groupCount));
  }
  if (rule.respond !== undefined) return actionProblem('respond', respondProblem(rule.respond));
  return actionProblem('rewrite', rewriteProblem(rule.rewrite));
}

function actionProblem(action: string, problem: string | undefined): string | undefined {
  return problem === undefined ? undefined : `${action}.${problem}`;
}

function boundedString(value: unknown, max = MAX_RULE_STRING_LENGTH): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= max && !/[\x00-\x1f\x7f]/.test(value);
}

function matchProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'match: expected an object';
  const match = value as Record<string, unknown>;
  for (const key of Object.keys(match)) {
    if (!['path', 'pathRegex', 'method', 'header'].includes(key)) return `${key}: unknown key (path, pathRegex, method, header)`;
  }
  if (match.path !== undefined && (!boundedString(match.path) || !match.path.startsWith('/'))) {
    return `path: expected a path prefix starting with /, at most ${MAX_RULE_STRING_LENGTH} characters`;
  }
  if (match.pathRegex !== undefined) {
    const problem = regexProblem(match.pathRegex);
    if (problem) return `pathRegex: ${problem}`;
  }
  if (match.method !== undefined) {
    const methods = match.method;
    if (!Array.isArray(methods) || methods.length === 0 || methods.length > 10) return 'method: expected 1 to 10 methods';
    for (const method of methods as unknown[]) {
      if (typeof method !== 'string' || !METHOD.test(method)) return `method: "${String(method).slice(0, 20)}" is not an upper-case method`;
    }
  }
  if (match.header !== undefined) {
    const { name, value: headerValue, ...rest } = (match.header ?? {}) as Record<string, unknown>;
    if (typeof match.header !== 'object' || Object.keys(rest).length > 0) return 'header: expected {name, value?}';
    if (typeof name !== 'string' || name.length > MAX_HEADER_NAME_LENGTH || !TOKEN.test(name)) return 'header.name: expected a header name';
    if (headerValue !== undefined && (typeof headerValue !== 'string' || !boundedString(headerValue, MAX_HEADER_VALUE_LENGTH))) {
      return `header.value: at most ${MAX_HEADER_VALUE_LENGTH} characters, no control characters`;
    }
  }
  return undefined;
}

function redirectProblem(value: unknown, groupCount: number | undefined): string | undefined {
  if (typeof value !== 'object' || value === null) return 'redirect: expected {to, status?}';
  const { to, status, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0) return `${Object.keys(rest)[0]}: unknown key (to, status)`;
  if (!boundedString(to) || !/^(\/|https?:\/\/)/.test(to)) return 'to: expected a path (/…) or an http(s):// URL';
  if (groupCount === undefined && highestReference(to) > 0)
    return `to: $${highestReference(to)} refers to a group of pathRegex, and the rule has none`;
  const references = referenceProblem(to, groupCount ?? 0);
  if (references) return `to: ${references} (pathRegex)`;
  if (status !== undefined && ![301, 302, 307, 308].includes(status as number)) return 'status: expected 301, 302, 307 or 308';
  return undefined;
}

function respondProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'respond: expected {status, headers?, body?}';
  const { status, headers, body, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0) return `${Object.keys(rest)[0]}: unknown key (status, headers, body)`;
  if (!Number.isInteger(status) || (status as number) < 200 || (status as number) > 599) return 'status: expected 200 to 599';
  if (body !== undefined && (typeof body !== 'string' || body.length > MAX_RESPOND_BODY_LENGTH)) {
    return `body: expected text of at most ${MAX_RESPOND_BODY_LENGTH} characters`;
  }
  if (headers !== undefined) {
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return 'headers: expected an object of name: value';
    const entries = Object.entries(headers);
    if (entries.length > MAX_RESPOND_HEADERS) return `headers: at most ${MAX_RESPOND_HEADERS}`;
    for (const [name, headerValue] of entries) {
      const problem = parseHeaderAdd(`${name}: ${typeof headerValue === 'string' ? headerValue : '\x00'}`);
      if (typeof problem === 'string') return `headers: ${problem}`;
    }
  }
  return undefined;
}

function rewriteProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'rewrite: expected {from, to}';
  const { from, to, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0) return `${Object.keys(rest)[0]}: unknown key (from, to)`;
  const compiled = RuleRegex.compile(from);
  if (typeof compiled === 'string') return `from: ${compiled}`;
  if (!boundedString(to) || !to.startsWith('/')) return 'to: expected a path starting with /';
  const references = referenceProblem(to, compiled.groupCount);
  return references === undefined ? undefined : `to: ${references} (from)`;
}

/** Why a rule's regular expression is refused (see rule-regex.ts), or undefined. */
export function regexProblem(value: unknown): string | undefined {
  const compiled = RuleRegex.compile(value);
  return typeof compiled === 'string' ? compiled : undefined;
}
