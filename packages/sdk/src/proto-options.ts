import { ErrorCode, SvcError } from '@svcrouter/protocol';

/** The kinds of tunnel forward() binds, as its options tell them apart. */
type TunnelKind = 'http' | 'tcp' | 'tls';

/** The options that apply to some kinds of tunnel only, and which. */
const KINDS_OF_OPTION = {
  subdomain: ['http', 'tls'],
  domain: ['http', 'tls'],
  hostHeader: ['http'],
  routes: ['http'],
  remoteAddr: ['tcp'],
  idleTimeoutMs: ['tcp', 'tls'],
  proxyProtocol: ['tcp', 'tls'],
  tlsCert: ['tls'],
  tlsKey: ['tls'],
} as const satisfies Record<string, readonly TunnelKind[]>;

type KindedOption = keyof typeof KINDS_OF_OPTION;

/**
 * The sentence for the first option given that the tunnel's kind does not take, or undefined.
 * Refused rather than ignored, as the CLI refuses a flag its command does not take: a subdomain
 * a TCP tunnel silently dropped, or a PROXY header an HTTP tunnel never sends, would leave the
 * caller believing in a tunnel they do not have. An empty `routes` list counts as none.
 */
export function misplacedOption(spec: Partial<Record<KindedOption, unknown>> & { proto?: unknown }): string | undefined {
  const kind: TunnelKind = spec.proto === 'tcp' || spec.proto === 'tls' ? spec.proto : 'http';
  for (const [option, kinds] of Object.entries(KINDS_OF_OPTION) as Array<[KindedOption, readonly TunnelKind[]]>) {
    const value = spec[option];
    if (value === undefined || (Array.isArray(value) && value.length === 0) || kinds.includes(kind)) continue;
    if ((option === 'subdomain' || option === 'domain') && kind === 'tcp') {
      return `${option} does not apply to proto "tcp": a TCP tunnel binds a port (remoteAddr for one the account reserved)`;
    }
    if (option === 'remoteAddr' && kind === 'tls')
      return 'remoteAddr does not apply to proto "tls": a TLS tunnel binds a hostname (subdomain, domain)';
    // Past the two names above, an option's kinds are HTTP alone or protos alone.
    const where = kinds[0] === 'http' ? 'HTTP tunnels' : `proto ${kinds.map((k) => `"${k}"`).join(' and ')}`;
    return `${option} applies to ${where} only, not ${kind === 'http' ? 'an HTTP tunnel' : `proto "${kind}"`}`;
  }
  return undefined;
}

/** Throws NAME_INVALID with misplacedOption's sentence when an option does not fit the tunnel's kind. */
export function checkOptionKinds(spec: Parameters<typeof misplacedOption>[0]): void {
  const misplaced = misplacedOption(spec);
  if (misplaced !== undefined) throw new SvcError(ErrorCode.NAME_INVALID, misplaced);
}

/**
 * A TCP tunnel's `remoteAddr` as the bind sends it: `host:port`, or the port alone, given as text
 * or as a number. Undefined when it is neither (the caller refuses it).
 */
export function remoteAddrText(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() === '' ? undefined : value;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535) return String(value);
  return undefined;
}
