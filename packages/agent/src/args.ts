import { parseArgs } from 'node:util';
import { accessProblem, hostHeaderProblem, type RouteOptions, type TrafficOptions } from '@svcrouter/sdk';
import { MAX_TCP_IDLE_TIMEOUT_MS, idleTimeoutTooLong } from '@svcrouter/sdk';
import { parseRouteFlags } from './route-flags.js';
import { DEFAULT_TRANSFER_BYTES } from './doctor/index.js';
import { misplacedFlag, type FlagCommand } from './command-flags.js';
import { inspectAddrProblem } from './inspector/guard.js';
import { tlsPairProblem, type TlsFlags } from './tls-flags.js';
import { TRAFFIC_FLAG_OPTIONS, TRAFFIC_FLAG_USAGE, trafficFlags } from './traffic-flags.js';

/** How the agent shows what happens: a live screen, plain lines, or JSON lines. */
export interface DisplayFlags {
  /** `--log stdout`: plain lines even on a terminal (default: the live screen on a TTY). */
  logStdout: boolean;
  /** `--log-format json`: one JSON object per event on stdout (default text). */
  json: boolean;
}

/** Inspector flags as typed; undefined when not given, so a config file or default applies. */
export interface InspectFlags {
  /** `--inspect=false` turns the local inspector off. */
  enabled?: boolean;
  /** `--inspect-addr host:port`. */
  addr?: string;
}

/** Flags of one tunnel given on the command line. */
export interface TunnelFlags extends TrafficOptions {
  subdomain?: string;
  domain?: string;
  /** `--host-header rewrite|<value>`. */
  hostHeader?: string;
  /** `--proto http1|h2`: the HTTP version spoken to the local service. */
  proto?: 'http1' | 'h2';
  /** `--basic-auth user:password`, repeatable. */
  basicAuth?: string[];
  /** `--cidr-allow`, repeatable. */
  cidrAllow?: string[];
  /** `--cidr-deny`, repeatable. */
  cidrDeny?: string[];
  /** `--pool`: share the name with the account's other agents instead of taking it over. */
  pool?: boolean;
  /** `--oidc <provider>`: visitors sign in with it. */
  oidc?: string;
  /** `--allow-email`, repeatable. */
  allowEmail?: string[];
  /** `--allow-domain`, repeatable. */
  allowDomain?: string[];
  /** `--route <path>=<target>[,host-header=…][,proto=h2]`, repeatable. */
  routes?: RouteOptions[];
}

/** Flags of `svc tcp`. */
export interface TcpFlags {
  /** `--remote-addr host:port`: a reserved TCP address of the account. */
  remoteAddr?: string;
  /** `--idle-timeout 30m`: ms; default 1 h, 0 never. */
  idleTimeoutMs?: number;
  /** `--proxy-protocol v1|v2`. */
  proxyProtocol?: 'v1' | 'v2';
  /** `--pool`: share the address with the account's other agents. */
  pool?: boolean;
  /** `svc tls`: a TLS passthrough tunnel on a hostname instead of a port. */
  tls?: TlsFlags;
}

/** What the command line asks for. */
export type Command =
  | { kind: 'version' }
  | { kind: 'help' }
  | { kind: 'http'; target: string; tunnel: TunnelFlags; display: DisplayFlags; inspect: InspectFlags }
  | { kind: 'tcp'; target: string; tcp: TcpFlags; display: DisplayFlags }
  | { kind: 'start'; names: string[]; configPath: string; display: DisplayFlags; inspect: InspectFlags }
  | { kind: 'config-check'; configPath: string }
  | { kind: 'doctor'; json: boolean; transferBytes: number };

export const USAGE = `Usage:
  svc http <port | host:port | http(s)://host:port | h2c://host:port> [options]
                                                                expose a local HTTP service
  svc tcp <port | host:port> [options]                          expose a local TCP service on an edge port
  svc tls <port | host:port> [options]                          expose a local TLS service on a hostname (SNI)
  svc start [names…] --config svc.yml                           start the tunnels of a config file
  svc config check --config svc.yml                             validate a config file
  svc doctor [--json] [--transfer-size 100MiB]                  check the edge, the token and a tunnel end to end
  svc version                                                   print the agent version

Options:
  --subdomain <name>          pin the subdomain (default SVC_SUBDOMAIN, else a random name)
  --domain <host>             bind on a verified custom domain (default SVC_DOMAIN)
  --host-header <rewrite|v>   Host sent to the local service: rewrite = the local target's host
  --proto <http1|h2>          HTTP version to the local service (default http1); h2 for gRPC
  --basic-auth <user:pass>    visitors must sign in (repeatable, at most 10; default SVC_BASIC_AUTH)
  --cidr-allow <cidr>         only these addresses may visit (repeatable; default SVC_CIDR_ALLOW)
  --cidr-deny <cidr>          these addresses get 403 (repeatable; default SVC_CIDR_DENY)
  --route <path>=<target>     send requests under <path> to another local service (repeatable;
                              longest path wins); add ,host-header=rewrite|<host> and ,proto=h2
  --pool                      share the name with the account's other agents: each request (tcp:
                              each connection) goes to one of them (needs --subdomain, --domain
                              or --remote-addr)
  --oidc <provider>           visitors sign in with this provider of the server (single sign-on)
  --allow-email <email>       with --oidc: this signed-in email may visit (repeatable)
  --allow-domain <domain>     with --oidc: emails of this domain may visit (repeatable)
${TRAFFIC_FLAG_USAGE}
  --remote-addr <host:port>   tcp: bind a TCP address reserved by the account (POST /v1/tcp-addresses)
  --idle-timeout <duration>   tcp: close a connection idle this long (default 1h; 30s, 5m, 0 = never)
  --proxy-protocol <v1|v2>    tcp, tls: send the visitor's address first as a PROXY protocol header
  --tls-cert <file>           tls: the agent terminates TLS with this certificate (PEM) and sends
                              plain bytes to the local service; with --tls-key
  --tls-key <file>            tls: the private key (PEM) of --tls-cert
  --log stdout                plain lines, even on a terminal
  --log-format <text|json>    json: one JSON object per event on stdout
  --inspect=false             turn the local inspector off
  --inspect-addr <host:port>  where the local inspector listens (default 127.0.0.1:4040)
  --config <file>             config file for start and config check
  --json                      doctor: print the results as one JSON object
  --transfer-size <size>      doctor: bytes of the upload and download checks (default 100MiB;
                              a number of bytes, or with KiB, MiB or GiB)

Environment (overrides the config file):
  SVC_TOKEN        agent token (svc_…), required
  SVC_SUBDOMAIN    pin the subdomain (default: a random name each run)
  SVC_DOMAIN       bind on a verified custom domain
  SVC_HOST_HEADER  Host sent to the local service, as --host-header
  SVC_SERVER       edge URL (default http://localhost:8080)
  SVC_BASIC_AUTH   user:password pairs, comma-separated (keeps passwords out of ps and history)
  SVC_CIDR_ALLOW   CIDRs allowed, comma-separated
  SVC_CIDR_DENY    CIDRs denied, comma-separated
  SVC_CA_FILE      PEM file of an extra CA to trust for an https edge`;

const OPTIONS = {
  subdomain: { type: 'string' },
  domain: { type: 'string' },
  'host-header': { type: 'string' },
  proto: { type: 'string' },
  'basic-auth': { type: 'string', multiple: true },
  'cidr-allow': { type: 'string', multiple: true },
  'cidr-deny': { type: 'string', multiple: true },
  oidc: { type: 'string' },
  'allow-email': { type: 'string', multiple: true },
  'allow-domain': { type: 'string', multiple: true },
  ...TRAFFIC_FLAG_OPTIONS,
  'remote-addr': { type: 'string' },
  pool: { type: 'boolean' },
  route: { type: 'string', multiple: true },
  'idle-timeout': { type: 'string' },
  'proxy-protocol': { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  log: { type: 'string' },
  'log-format': { type: 'string' },
  inspect: { type: 'string' },
  'inspect-addr': { type: 'string' },
  config: { type: 'string', short: 'c' },
  json: { type: 'boolean' },
  'transfer-size': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

/** `svc tls`'s own flags (misplacedFlag refused the others). */
function tlsFlags(values: Record<string, unknown>): TlsFlags | string {
  const tls: TlsFlags = {};
  if (typeof values.subdomain === 'string') tls.subdomain = values.subdomain;
  if (typeof values.domain === 'string') tls.domain = values.domain;
  if (typeof values['tls-cert'] === 'string') tls.certFile = values['tls-cert'];
  if (typeof values['tls-key'] === 'string') tls.keyFile = values['tls-key'];
  return tlsPairProblem(tls) ?? tls;
}

const FLAG_COMMAND_NAMES: readonly string[] = ['http', 'tcp', 'tls', 'start', 'config', 'doctor'] satisfies FlagCommand[];

/** Parses argv (without node and the script); returns the usage error as a sentence. */
export function parseCommand(argv: string[]): Command | string {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    return (error as Error).message;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (command === 'version') {
    // `svc version --json` must not look like it did what doctor's --json does.
    if (rest.length > 0) return 'svc version takes no arguments';
    return misplacedFlag(values, 'version') ?? { kind: 'version' };
  }
  if (values.version) return { kind: 'version' };
  if (values.help || command === 'help' || command === undefined) return { kind: 'help' };
  const display = displayFlags(values.log, values['log-format']);
  if (typeof display === 'string') return display;
  const inspect = inspectFlags(values.inspect, values['inspect-addr']);
  if (typeof inspect === 'string') return inspect;
  if (FLAG_COMMAND_NAMES.includes(command)) {
    const misplaced = misplacedFlag(values, command as FlagCommand);
    if (misplaced !== undefined) return misplaced;
  }
  switch (command) {
    case 'http': {
      if (rest.length !== 1) return 'svc http takes exactly one local address';
      const tunnel: TunnelFlags = {};
      if (values.subdomain !== undefined) tunnel.subdomain = values.subdomain;
      if (values.domain !== undefined) tunnel.domain = values.domain;
      if (values['host-header'] !== undefined) {
        const problem = hostHeaderProblem(values['host-header']);
        if (problem !== undefined) return `--host-header: ${problem}`;
        tunnel.hostHeader = values['host-header'];
      }
      if (values.proto !== undefined) {
        if (values.proto !== 'http1' && values.proto !== 'h2') return `--proto takes "http1" or "h2", not "${values.proto}"`;
        tunnel.proto = values.proto;
      }
      if (values['basic-auth'] !== undefined) tunnel.basicAuth = values['basic-auth'];
      if (values['cidr-allow'] !== undefined) tunnel.cidrAllow = values['cidr-allow'];
      if (values['cidr-deny'] !== undefined) tunnel.cidrDeny = values['cidr-deny'];
      if (values.pool === true) tunnel.pool = true;
      if (values.oidc !== undefined) tunnel.oidc = values.oidc;
      if (values['allow-email'] !== undefined) tunnel.allowEmail = values['allow-email'];
      if (values['allow-domain'] !== undefined) tunnel.allowDomain = values['allow-domain'];
      Object.assign(tunnel, trafficFlags(values));
      if (values.route !== undefined) {
        const routes = parseRouteFlags(values.route);
        if (typeof routes === 'string') return `--route: ${routes}`;
        tunnel.routes = routes;
      }
      const problem = accessProblem(tunnel);
      if (problem !== undefined) return `--${flagOf(problem)}: ${problem.slice(problem.indexOf(':') + 2)}`;
      return { kind: 'http', target: rest[0]!, tunnel, display, inspect };
    }
    case 'tcp':
    case 'tls': {
      if (rest.length !== 1) return `svc ${command} takes exactly one local address`;
      const tcp: TcpFlags = {};
      if (command === 'tls') {
        const tls = tlsFlags(values);
        if (typeof tls === 'string') return tls;
        tcp.tls = tls;
      }
      if (values['remote-addr'] !== undefined) tcp.remoteAddr = values['remote-addr'];
      if (values.pool === true) tcp.pool = true;
      if (values['idle-timeout'] !== undefined) {
        const ms = parseDuration(values['idle-timeout']);
        if (ms === undefined)
          return `--idle-timeout takes a duration such as 30s, 5m, 1h, a number of seconds, or 0 (never), not "${values['idle-timeout']}"`;
        if (ms > MAX_TCP_IDLE_TIMEOUT_MS) return `--idle-timeout ${idleTimeoutTooLong(values['idle-timeout'])}`;
        tcp.idleTimeoutMs = ms;
      }
      if (values['proxy-protocol'] !== undefined) {
        const version = values['proxy-protocol'];
        if (version !== 'v1' && version !== 'v2') return `--proxy-protocol takes "v1" or "v2", not "${version}"`;
        tcp.proxyProtocol = version;
      }
      return { kind: 'tcp', target: rest[0]!, tcp, display };
    }
    case 'start':
      if (values.config === undefined) return 'svc start needs --config <file>';
      return { kind: 'start', names: rest, configPath: values.config, display, inspect };
    case 'config':
      if (rest[0] !== 'check' || rest.length !== 1) return 'the config command is: svc config check --config <file>';
      if (values.config === undefined) return 'svc config check needs --config <file>';
      return { kind: 'config-check', configPath: values.config };
    case 'doctor': {
      if (rest.length !== 0) return 'svc doctor takes no arguments';
      const transferBytes = values['transfer-size'] === undefined ? DEFAULT_TRANSFER_BYTES : parseSize(values['transfer-size']);
      if (transferBytes === undefined)
        return `--transfer-size takes a size such as 1048576, 64KiB or 100MiB, not "${values['transfer-size']}"`;
      return { kind: 'doctor', json: values.json ?? false, transferBytes };
    }
    default:
      return `unknown command "${command}"`;
  }
}

/** Units of --transfer-size. */
const SIZE_UNITS: Readonly<Record<string, number>> = { '': 1, B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 };
/** Largest --transfer-size: the checks stream, but a transfer counts against the account's quota. */
const MAX_TRANSFER_BYTES = 10 * 1024 ** 3;

/** `123`, `64KiB`, `100MiB` or `1GiB` as bytes; undefined for anything else or beyond MAX_TRANSFER_BYTES. */
export function parseSize(text: string): number | undefined {
  const match = /^(\d{1,12})(B|KiB|MiB|GiB)?$/.exec(text.trim());
  if (!match) return undefined;
  const bytes = Number(match[1]) * SIZE_UNITS[match[2] ?? '']!;
  return bytes <= MAX_TRANSFER_BYTES ? bytes : undefined;
}

/** The flag a rule's problem (`basicAuth: …`) is about. */
function flagOf(problem: string): string {
  const key = problem.slice(0, problem.indexOf(':'));
  return key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

function displayFlags(log: string | undefined, format: string | undefined): DisplayFlags | string {
  if (log !== undefined && log !== 'stdout') return `--log takes "stdout", not "${log}"`;
  if (format !== undefined && format !== 'text' && format !== 'json') return `--log-format takes "text" or "json", not "${format}"`;
  return { logStdout: log === 'stdout', json: format === 'json' };
}

function inspectFlags(inspect: string | undefined, addr: string | undefined): InspectFlags | string {
  const flags: InspectFlags = {};
  if (inspect !== undefined) {
    if (inspect !== 'true' && inspect !== 'false') return `--inspect takes true or false, not "${inspect}"`;
    flags.enabled = inspect === 'true';
  }
  if (addr !== undefined) {
    // Checked here as well as when the inspector starts, so a network address is a usage error
    // (exit 2) before anything connects, as `inspector.addr` is in `svc config check`.
    const problem = inspectAddrProblem(addr);
    if (problem !== undefined) return problem;
    flags.addr = addr;
  }
  return flags;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `30s`, `5m`, `1h`, `250ms` or a bare number of seconds, to ms; undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d{1,9})(ms|s|m|h)?$/.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * DURATION_UNITS[match[2] ?? 's']!;
}
