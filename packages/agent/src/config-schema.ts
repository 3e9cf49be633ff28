import {
  MAX_ALLOW_RULES,
  MAX_BASIC_AUTH_USERS,
  MAX_CIDRS,
  allowDomainProblem,
  allowEmailProblem,
  cidrProblem,
  oidcNameProblem,
  parseBasicAuthPair,
} from '@svcrouter/protocol';
import { MAX_TCP_IDLE_TIMEOUT_MS, hostHeaderProblem, idleTimeoutTooLong, parseLocalTarget, parseTcpTarget } from '@svcrouter/sdk';
import { z } from 'zod';
import { checkPolicy, POLICY_BLOCK_KEYS, TRAFFIC_FIELDS } from './config-policy.js';
import { checkRoutes, RoutesSchema } from './config-routes.js';
import { isLoopbackHost, parseInspectAddr } from './inspector/guard.js';

/** Only this shape is a token; anything else (quotes, spaces, other prefixes) is refused as-is. */
export const TOKEN_SHAPE = /^svc_[A-Za-z0-9_-]{43}$/;

/** Where the inspector listens by default; the next free port is taken when this one is in use. */
export const DEFAULT_INSPECT_ADDR = '127.0.0.1:4040';

const localTarget = z.union([z.string(), z.number()], { error: 'expected a port, host:port or URL' });

const NOT_A_PORT = 'a port is a whole number from 1 to 65535';
/** A TCP tunnel's public address, `host:port` or the port alone (YAML reads a bare port as a number), as a string. */
const remoteAddress = z
  .union([z.string().min(1), z.number().int(NOT_A_PORT).min(1, NOT_A_PORT).max(65535, NOT_A_PORT)], {
    error: 'expected host:port or a port',
  })
  .transform(String);

/** A `user:password` pair; the message names the user at most, never the password. */
const basicAuthPair = z.string().superRefine((value, context) => {
  const parsed = parseBasicAuthPair(value);
  if (typeof parsed === 'string') context.addIssue({ code: 'custom', message: parsed });
});

const cidr = z.string().superRefine((value, context) => {
  const problem = cidrProblem(value);
  if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
});

/** A string checked by one of the policy's `…Problem` functions. */
const checked = (problemOf: (value: unknown) => string | undefined) =>
  z.string().superRefine((value, context) => {
    const problem = problemOf(value);
    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
  });

const allowList = (problemOf: (value: unknown) => string | undefined) =>
  z.array(checked(problemOf)).min(1, 'expected at least one entry').max(MAX_ALLOW_RULES, `at most ${MAX_ALLOW_RULES} entries`);

const cidrList = z.array(cidr).min(1, 'expected at least one CIDR').max(MAX_CIDRS, `at most ${MAX_CIDRS} entries`);

/** The local inspector's settings, shared by the agent's tunnels. */
export const InspectorSchema = z.strictObject({
  /** Serve the inspector (default true). */
  enabled: z.boolean().optional(),
  /** `host:port` on loopback (default DEFAULT_INSPECT_ADDR). */
  addr: z
    .string()
    .superRefine((addr, context) => {
      const parsed = parseInspectAddr(addr);
      // The same checks the inspector makes when it starts, so `svc config check` catches them.
      if (!parsed) context.addIssue({ code: 'custom', message: 'expected host:port (port 0-65535)' });
      else if (!isLoopbackHost(parsed.host))
        context.addIssue({ code: 'custom', message: `must be a loopback address (127.0.0.1, localhost or ::1), not ${parsed.host}` });
    })
    .optional(),
  /** Bytes kept of each request and response body (default the SDK's DEFAULT_MAX_BODY_BYTES). */
  maxBodyBytes: z
    .number()
    .int()
    .min(0)
    .max(16 * 1024 * 1024)
    .optional(),
  /** Requests kept, oldest dropped first (default the SDK's DEFAULT_MAX_REQUESTS). */
  maxRequests: z.number().int().min(1).max(10_000).optional(),
});

/** One named tunnel of a config file (its `policy:` block added below). */
const TunnelBaseSchema = z.strictObject({
  /** Local service: a port, `host:port`, an http(s) URL or `h2c://host:port`. Required. */
  addr: localTarget,
  /**
   * HTTP version spoken to the local service: `http1` (default) or `h2` (HTTP/2, needed for gRPC);
   * `tcp` makes a TCP tunnel (`addr` is then a port or `host:port`), `tls` a TLS passthrough tunnel
   * on a hostname (`addr` as for tcp; the local service terminates TLS unless tlsCert is given).
   */
  proto: z.enum(['http1', 'h2', 'tcp', 'tls']).optional(),
  /** `proto: tcp`: a reserved TCP address of the account (`host:port` or the port); default a random port. */
  remoteAddr: remoteAddress.optional(),
  /** `proto: tcp`: ms without a byte either way before a connection closes (default 3600000; 0 never). */
  // The length first, alone: a huge value is not also told it is not a safe integer.
  idleTimeoutMs: z
    .number()
    .max(MAX_TCP_IDLE_TIMEOUT_MS, idleTimeoutTooLong())
    .pipe(z.number().int('expected a whole number of ms').min(0, 'expected 0 (never) or more ms'))
    .optional(),
  /** `proto: tcp`: send the visitor's address first as a PROXY protocol `v1` or `v2` header (default none). */
  proxyProtocol: z.enum(['v1', 'v2']).optional(),
  /** `proto: tls`: the agent terminates TLS with this certificate (PEM file, relative to the config file), with tlsKey. */
  tlsCert: z.string().min(1).optional(),
  /** `proto: tls`: the private key (PEM file) of tlsCert. */
  tlsKey: z.string().min(1).optional(),
  /** Pinned subdomain (default: a random name each run). */
  subdomain: z.string().min(1).optional(),
  /** Verified custom domain to bind on (default: the shared domain). */
  domain: z.string().min(1).optional(),
  /** `rewrite` or a value for the Host header sent to the local service (default: the public host). */
  hostHeader: z
    .string()
    .refine((value) => hostHeaderProblem(value) === undefined, { error: 'expected "rewrite" or a host name, optionally with :port' })
    .optional(),
  /** Capture this tunnel's traffic in the inspector (default true). */
  inspect: z.boolean().optional(),
  /** `user:password` pairs visitors must sign in with (default none); SVC_BASIC_AUTH overrides it. */
  basicAuth: z
    .array(basicAuthPair)
    .min(1, 'expected at least one user:password pair')
    .max(MAX_BASIC_AUTH_USERS, `at most ${MAX_BASIC_AUTH_USERS} user:password pairs`)
    .optional(),
  /** Only these CIDRs may reach the tunnel (default everyone); SVC_CIDR_ALLOW overrides it. */
  cidrAllow: cidrList.optional(),
  /** These CIDRs get 403 (default none); deny wins over allow. SVC_CIDR_DENY overrides it. */
  cidrDeny: cidrList.optional(),
  /** Visitors sign in with this OpenID Connect provider of the server (default none: no sign-in). */
  oidc: checked(oidcNameProblem).optional(),
  /** With oidc: signed-in emails allowed (default: with allowDomain absent too, every signed-in visitor). */
  allowEmail: allowList(allowEmailProblem).optional(),
  /** With oidc: email domains allowed (default none). */
  allowDomain: allowList(allowDomainProblem).optional(),
  /** Share the name (or `remoteAddr`) with the account's other agents, each request or connection going to one (default false: take it over). */
  pool: z.boolean().optional(),
  ...TRAFFIC_FIELDS,
});

/** One named tunnel of a config file. */
export const TunnelFieldsSchema = TunnelBaseSchema.extend({
  /** Paths served by other local services: `"/api=4000"` or { path, addr, hostHeader?, proto? } each (default none). */
  routes: RoutesSchema.optional(),
  /** Every policy key (access and traffic rules) in one block, instead of on the tunnel (default none). */
  policy: TunnelBaseSchema.pick(POLICY_BLOCK_KEYS).optional(),
});

/** The address read as the tunnel's kind reads it: a URL for HTTP, host:port for TCP; access rules are HTTP's. */
export function checkTunnel(tunnel: z.infer<typeof TunnelFieldsSchema>, context: z.RefinementCtx): void {
  const parsed = tunnel.proto === 'tcp' || tunnel.proto === 'tls' ? parseTcpTarget(tunnel.addr) : parseLocalTarget(tunnel.addr);
  if (typeof parsed === 'string') context.addIssue({ code: 'custom', message: parsed, path: ['addr'] });
  for (const key of ['allowEmail', 'allowDomain'] as const) {
    if (tunnel[key] !== undefined && tunnel.oidc === undefined)
      context.addIssue({ code: 'custom', message: 'needs oidc (the provider visitors sign in with)', path: [key] });
  }
  if (tunnel.oidc !== undefined && tunnel.basicAuth !== undefined)
    context.addIssue({ code: 'custom', message: 'cannot be combined with basicAuth', path: ['oidc'] });
  checkPolicy(tunnel, context);
  if (tunnel.routes !== undefined && tunnel.proto !== 'tcp' && tunnel.proto !== 'tls') checkRoutes(tunnel.routes, context);
  if (tunnel.proto === 'tls') return checkTlsTunnel(tunnel, context);
  for (const key of ['tlsCert', 'tlsKey'] as const) {
    if (tunnel[key] !== undefined) context.addIssue({ code: 'custom', message: 'applies to proto: tls only', path: [key] });
  }
  if (tunnel.proto !== 'tcp') {
    // An HTTP tunnel: the settings of connections passed through would silently do nothing.
    for (const key of ['remoteAddr', 'idleTimeoutMs', 'proxyProtocol'] as const) {
      const where = key === 'remoteAddr' ? 'proto: tcp only' : 'proto: tcp and proto: tls only';
      if (tunnel[key] !== undefined) context.addIssue({ code: 'custom', message: `applies to ${where}, not an HTTP tunnel`, path: [key] });
    }
    return;
  }
  for (const key of ['subdomain', 'domain'] as const) {
    if (tunnel[key] !== undefined)
      context.addIssue({
        code: 'custom',
        message: 'applies to HTTP and TLS tunnels, not proto: tcp (it binds a port; remoteAddr for one the account reserved)',
        path: [key],
      });
  }
  for (const key of ['basicAuth', 'cidrAllow', 'cidrDeny', 'oidc', 'allowEmail', 'allowDomain', 'hostHeader', 'routes'] as const) {
    if (tunnel[key] !== undefined)
      context.addIssue({ code: 'custom', message: 'applies to HTTP tunnels only, not proto: tcp', path: [key] });
  }
}

/** A TLS tunnel: no access rules (the edge never sees its requests), no HTTP or TCP-port settings, a certificate with its key. */
function checkTlsTunnel(tunnel: z.infer<typeof TunnelFieldsSchema>, context: z.RefinementCtx): void {
  for (const key of ['basicAuth', 'cidrAllow', 'cidrDeny', 'oidc', 'allowEmail', 'allowDomain'] as const) {
    if (tunnel[key] !== undefined)
      context.addIssue({
        code: 'custom',
        message: 'access rules cannot apply to proto: tls (the edge passes its connections through without decrypting them)',
        path: [key],
      });
  }
  const httpOnly = [
    'hostHeader',
    'remoteAddr',
    'routes',
    'policy',
    'rules',
    'rateLimit',
    'verifyWebhook',
    'verifyWebhookMaxBody',
    'requestHeaderAdd',
    'requestHeaderRemove',
    'responseHeaderAdd',
    'responseHeaderRemove',
  ] as const;
  for (const key of httpOnly) {
    if (tunnel[key] !== undefined) context.addIssue({ code: 'custom', message: 'does not apply to proto: tls', path: [key] });
  }
  if ((tunnel.tlsCert === undefined) !== (tunnel.tlsKey === undefined)) {
    const missing = tunnel.tlsCert === undefined ? 'tlsCert' : 'tlsKey';
    context.addIssue({
      code: 'custom',
      message: `needs ${missing === 'tlsCert' ? 'tlsCert (its certificate)' : 'tlsKey (its key)'}`,
      path: [missing === 'tlsCert' ? 'tlsKey' : 'tlsCert'],
    });
  }
}

export const TunnelConfigSchema = TunnelFieldsSchema.superRefine(checkTunnel);

/** A tunnel's name: the key in a config file, and how the agent API names it. */
export const TunnelNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/, 'a tunnel name is 1-63 letters, digits, - and _, starting with a letter or digit');

/** A config file (`svc start --config svc.yml`). Every field is optional but tunnels. */
export const ConfigFileSchema = z.strictObject({
  /** File format version; only 1 exists (default 1). */
  version: z.literal(1).optional(),
  /** Agent token; SVC_TOKEN overrides it. */
  token: z.string().regex(TOKEN_SHAPE, 'not an agent token (svc_ followed by 43 letters, digits, - or _)').optional(),
  /** Edge URL (default http://localhost:8080); SVC_SERVER overrides it. */
  server: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }).optional(),
  inspector: InspectorSchema.optional(),
  /** Tunnels by name; names are what `svc start <names…>` picks. */
  tunnels: z
    .record(TunnelNameSchema, TunnelConfigSchema)
    .refine((tunnels) => Object.keys(tunnels).length > 0, 'at least one tunnel is needed')
    .superRefine(checkSharedNames),
});

/** Two tunnels of one file that ask for one name (without both being pool members) would replace each other. */
function checkSharedNames(tunnels: Record<string, TunnelConfig>, context: z.RefinementCtx): void {
  const claimed = new Map<string, string>();
  for (const [name, tunnel] of Object.entries(tunnels)) {
    for (const key of ['subdomain', 'domain', 'remoteAddr'] as const) {
      const value = tunnel[key];
      if (value === undefined || tunnel.pool === true) continue;
      // String(): the refinement also runs over a file with other problems, where a value may not be one yet.
      const id = `${key}:${String(value).toLowerCase()}`;
      const first = claimed.get(id);
      if (first === undefined) claimed.set(id, name);
      else
        context.addIssue({
          code: 'custom',
          message: `tunnel ${first} asks for ${value} too; give each tunnel its own name`,
          path: [name, key],
        });
    }
  }
}

export type ConfigFile = z.infer<typeof ConfigFileSchema>;
export type TunnelConfig = z.infer<typeof TunnelConfigSchema>;
export type InspectorConfig = z.infer<typeof InspectorSchema>;
