import { TRAFFIC_FLAG_OPTIONS } from './traffic-flags.js';

/** The commands whose flags differ; `config` is `svc config check`. */
export type FlagCommand = 'http' | 'tcp' | 'tls' | 'start' | 'config' | 'doctor' | 'version';

/** Flags that put rules on visitors before their requests reach the local service. */
const ACCESS_FLAGS = ['basic-auth', 'cidr-allow', 'cidr-deny', 'oidc', 'allow-email', 'allow-domain'];

/**
 * The commands each command-specific flag belongs to; a flag not listed (--log, --inspect…)
 * is taken by every command. A flag given to a command it does not belong to is a usage
 * error, never ignored: an access rule that silently does nothing leaves a port open.
 */
const FLAG_COMMANDS: Readonly<Record<string, readonly FlagCommand[]>> = {
  subdomain: ['http', 'tls'],
  domain: ['http', 'tls'],
  'host-header': ['http'],
  proto: ['http'],
  route: ['http'],
  ...Object.fromEntries([...ACCESS_FLAGS, ...Object.keys(TRAFFIC_FLAG_OPTIONS)].map((flag) => [flag, ['http'] as const])),
  pool: ['http', 'tcp', 'tls'],
  'remote-addr': ['tcp'],
  'idle-timeout': ['tcp', 'tls'],
  'proxy-protocol': ['tcp', 'tls'],
  'tls-cert': ['tls'],
  'tls-key': ['tls'],
  config: ['start', 'config'],
  json: ['doctor'],
  'transfer-size': ['doctor'],
};

/** The usage error for the first flag given that `command` does not take; undefined when all fit. */
export function misplacedFlag(values: Readonly<Record<string, unknown>>, command: FlagCommand): string | undefined {
  for (const [flag, commands] of Object.entries(FLAG_COMMANDS)) {
    if (values[flag] === undefined || commands.includes(command)) continue;
    if (ACCESS_FLAGS.includes(flag) && (command === 'tcp' || command === 'tls')) return passThroughRefusal(flag, command);
    if (flag === 'remote-addr' && command === 'tls')
      return '--remote-addr is for svc tcp; svc tls binds a hostname (--subdomain, --domain)';
    if ((flag === 'subdomain' || flag === 'domain') && command === 'tcp') {
      return `--${flag} is for svc http and svc tls; svc tcp binds a port (--remote-addr for one the account reserved)`;
    }
    const names = commands.map((name) => `svc ${name === 'config' ? 'config check' : name}`);
    return `--${flag} is for ${names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`}`;
  }
  return undefined;
}

/** The sentence for an access rule given to a tunnel whose connections the edge passes through. */
export function passThroughRefusal(flag: string, command: 'tcp' | 'tls'): string {
  return command === 'tls'
    ? `--${flag}: access rules cannot apply to a TLS tunnel: the edge passes its connections through without decrypting them; check visitors in the local service`
    : `--${flag}: access rules apply to HTTP tunnels only: a TCP tunnel's port passes every visitor's connection to the local service; check visitors there`;
}
