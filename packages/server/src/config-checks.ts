import { isIP } from 'node:net';
import { OIDC_NAME_SHAPE, cidrProblem } from '@svcrouter/protocol';
import { z } from 'zod';
import { parseEdgeTarget, type EdgeTarget } from './domains/index.js';
import { hasDnsLabels } from './hostname/index.js';

// The checks of svc-server's SVC_* variables, one per kind of value: each answers the parsed
// value or what was expected, never echoing the raw text (it may hold a password). config.ts
// names which variable takes which check.

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** An inclusive range of edge ports for TCP tunnels. */
export interface TcpPortRange {
  readonly from: number;
  readonly to: number;
}

/** One OpenID Connect provider of SVC_OIDC_PROVIDERS. */
export interface OidcProviderConfig {
  /** What a bind's `oidc` names (lower-case letters, digits, - and _). */
  readonly name: string;
  /** The issuer URL; discovery reads `<issuer>/.well-known/openid-configuration`. */
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
}

export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
export const MIN_HEARTBEAT_MS = 10;
export const MAX_HEARTBEAT_MS = 600_000;
export const EMAIL_RE = /^[^\s@"'<>]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/;
export const NODE_ID_RE = /^[A-Za-z0-9._-]{1,100}$/;
/** A shared secret shorter than this is guessable offline from one captured handshake. */
export const MIN_CLUSTER_SECRET = 16;

export type Check<T> = (raw: string) => { ok: true; value: T } | { ok: false; expected: string };
export const ok = <T>(value: T) => ({ ok: true, value }) as const;
export const expected = (what: string) => ({ ok: false, expected: what }) as const;

// One variable: unset or empty gives the fallback; otherwise the check decides.
export function envVar<T>(fallback: T, check: Check<T>) {
  return z
    .string()
    .optional()
    .transform((raw, ctx): T => {
      if (raw === undefined || raw === '') return fallback;
      const result = check(raw);
      if (result.ok) return result.value;
      ctx.addIssue({ code: 'custom', message: `expected ${result.expected}` });
      return z.NEVER;
    });
}

export const integer =
  (min: number, max: number): Check<number> =>
  (raw) => {
    const n = Number(raw);
    return /^\d+$/.test(raw) && n >= min && n <= max ? ok(n) : expected(`an integer ${min}-${max}`);
  };

export const hostname: Check<string> = (raw) => {
  const host = raw.toLowerCase();
  return hasDnsLabels(host) ? ok(host) : expected('a hostname such as localhost or tunnels.example.com');
};

export const bindHost: Check<string> = (raw) =>
  isIP(raw) !== 0 || hostname(raw).ok ? ok(raw) : expected('an IP address such as :: or 0.0.0.0, or a hostname');

export const httpUrl: Check<string> = (raw) => {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  return url && (url.protocol === 'https:' || url.protocol === 'http:') ? ok(raw) : expected('an http(s) URL');
};

// The internal listener speaks plain HTTP: TLS between nodes is not done yet (docs/deploy.md).
export const nodeUrl: Check<string> = (raw) => {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  const plain = url?.protocol === 'http:' && url.username === '' && url.password === '' && url.search === '' && url.hash === '';
  return url && plain && url.pathname === '/'
    ? ok(`http://${url.host}`)
    : expected('http://host:port, the address other nodes reach this node at, e.g. http://10.0.0.5:8090');
};

export const cidrList: Check<readonly string[]> = (raw) => {
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const bad = entries.find((entry) => cidrProblem(entry) !== undefined);
  return bad === undefined && entries.length > 0
    ? ok(Object.freeze(entries))
    : expected('comma-separated CIDRs or addresses such as 10.0.0.0/8,2001:db8::/32');
};

export const clusterSecret: Check<string> = (raw) =>
  raw.length >= MIN_CLUSTER_SECRET && !/\s/.test(raw) ? ok(raw) : expected(`at least ${MIN_CLUSTER_SECRET} characters without spaces`);

export const msList: Check<readonly number[]> = (raw) => {
  const values = raw.split(',').map((s) => s.trim());
  return values.every((v) => /^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= 86_400_000)
    ? ok(Object.freeze(values.map(Number)))
    : expected('comma-separated milliseconds, each 1-86400000, e.g. 5000,30000,120000');
};

export const postgresUrl: Check<string> = (raw) =>
  /^postgres(ql)?:\/\//i.test(raw) && URL.canParse(raw) ? ok(raw) : expected('a postgres:// or postgresql:// URL');

export const oneOf =
  <T extends string>(values: readonly T[]): Check<T> =>
  (raw) => {
    const value = values.find((v) => v === raw);
    return value !== undefined ? ok(value) : expected(`one of ${values.join(', ')}`);
  };

export const matching =
  (re: RegExp, what: string): Check<string> =>
  (raw) =>
    re.test(raw) ? ok(raw) : expected(what);

// Node's dns.Resolver#setServers accepts exactly these shapes.
export function isDnsServer(entry: string): boolean {
  if (isIP(entry) !== 0) return true;
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(entry) ?? /^([^:]+):(\d{1,5})$/.exec(entry);
  const port = Number(m?.[2]);
  return m !== null && isIP(m[1] ?? '') !== 0 && port >= 1 && port <= 65535;
}

export const dnsServers: Check<readonly string[]> = (raw) => {
  const entries = raw.split(',').map((s) => s.trim());
  return entries.every(isDnsServer)
    ? ok(Object.freeze(entries))
    : expected('a comma-separated list of IP addresses, each optionally with :port ([ipv6]:port)');
};

export const edgeTarget: Check<Readonly<EdgeTarget>> = (raw) => {
  const target = parseEdgeTarget(raw);
  return target
    ? ok(freezeTarget(target))
    : expected('one hostname and/or IPv4 addresses, comma-separated, e.g. edge.example.com or 203.0.113.7');
};

export function freezeTarget(target: EdgeTarget): Readonly<EdgeTarget> {
  return Object.freeze({ ...target, ...(target.ips ? { ips: Object.freeze([...target.ips]) } : {}) });
}

export const limit = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
export const planOverride = z.strictObject({
  tunnels: limit.optional(),
  domains: limit.optional(),
  bandwidthBytes: limit.optional(),
  webhooks: limit.optional(),
  tcpAddresses: limit.optional(),
});
export const plansOverride = z.strictObject({ free: planOverride.optional(), pro: planOverride.optional() });

export const oidcProviderSchema = z.strictObject({
  name: z.string().regex(OIDC_NAME_SHAPE, 'lower-case letters, digits, - and _, at most 32 characters'),
  issuer: z.string().refine((raw) => /^https?:\/\//.test(raw) && URL.canParse(raw), 'an http(s) URL'),
  clientId: z.string().min(1),
  clientSecret: z.string().min(1),
});

export const oidcProviders: Check<readonly OidcProviderConfig[]> = (raw) => {
  const shape = 'a JSON array of {"name","issuer","clientId","clientSecret"}';
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return expected(shape);
  }
  const parsed = z.array(oidcProviderSchema).min(1).safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') ?? '';
    return expected(`${shape}${where ? ` (at ${where}: ${issue?.message ?? 'invalid'})` : ''}`);
  }
  const names = new Set<string>();
  for (const provider of parsed.data) {
    if (names.has(provider.name)) return expected(`${shape} with distinct names ("${provider.name}" is given twice)`);
    names.add(provider.name);
  }
  return ok(Object.freeze(parsed.data.map((provider) => Object.freeze({ ...provider }))));
};

export const hours: Check<number> = (raw) => {
  const n = Number(raw);
  return /^\d+(\.\d+)?$/.test(raw) && n >= 0.0001 && n <= 8760 ? ok(n) : expected('a number of hours, 0.0001-8760');
};

export const tcpPortRange: Check<TcpPortRange | undefined> = (raw) => {
  if (raw === 'off') return ok(undefined);
  const match = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(raw);
  const from = Number(match?.[1]);
  const to = match?.[2] === undefined ? from : Number(match[2]);
  if (!match || from < 1 || to > 65535 || from > to) return expected('a port range such as 20000-20999, a port, or off');
  return ok(Object.freeze({ from, to }));
};

export function dropUndefined<T extends object>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}
