import { createSecureContext, type SecureContext } from 'node:tls';
import { BindMessages, ErrorCode, SvcError } from '@svcrouter/protocol';
import type { AccessOptions } from './access.js';
import { envDefault } from './env-defaults.js';
import { bindTcpOn, checkedTcpTarget, holdOnSecondNode, openEdge, type CheckedTunnel, type ForwardOptions } from './forward.js';
import type { BindRequest } from './session-tunnel.js';
import type { TcpTarget } from './tcp-proxy.js';
import type { Tunnel } from './tunnel.js';

// TLS passthrough tunnels: a hostname (like an HTTP tunnel's) whose visitors' TLS connections the
// edge passes through by SNI without decrypting them, arriving here as a TCP tunnel's raw streams.

/** Options only `proto: 'tls'` takes. */
export interface TlsForwardOptions {
  /**
   * `proto: 'tls'`: the agent terminates TLS itself with this certificate chain (PEM) and its key
   * (`tlsKey`), and the local service speaks plain bytes; the edge still sees only ciphertext.
   * Absent: the local service terminates TLS.
   */
  tlsCert?: string | Buffer;
  /** `proto: 'tls'`: the private key (PEM) of `tlsCert`. */
  tlsKey?: string | Buffer;
}

const ACCESS_KEYS: ReadonlyArray<keyof AccessOptions> = ['basicAuth', 'cidrAllow', 'cidrDeny', 'oidc', 'allowEmail', 'allowDomain'];

/** A TLS tunnel's target, checked before dialling: no access rules, a certificate and key together that load. */
export function checkedTlsSpec(
  spec: Pick<ForwardOptions, 'addr' | 'proxyProtocol' | 'idleTimeoutMs' | 'tlsCert' | 'tlsKey' | keyof AccessOptions>,
): CheckedTunnel {
  if (ACCESS_KEYS.some((key) => spec[key] !== undefined)) throw new SvcError(ErrorCode.POLICY_INVALID, BindMessages.tlsNoAccess);
  const target = checkedTcpTarget(spec);
  const checked: CheckedTunnel = { target, policy: undefined };
  const terminate = terminatingContext(spec.tlsCert, spec.tlsKey);
  if (terminate !== undefined) checked.terminate = terminate;
  return checked;
}

/** The bind's name of a TLS tunnel: its subdomain or domain (SVC_SUBDOMAIN / SVC_DOMAIN by default), else a random one. */
export function tlsBind(options: Pick<ForwardOptions, 'subdomain' | 'domain'>): Pick<BindRequest, 'subdomain' | 'domain'> {
  const name: Pick<BindRequest, 'subdomain' | 'domain'> = {};
  const subdomain = options.subdomain ?? envDefault('SVC_SUBDOMAIN');
  const domain = options.domain ?? envDefault('SVC_DOMAIN');
  if (subdomain !== undefined) name.subdomain = subdomain;
  if (domain !== undefined) name.domain = domain;
  return name;
}

/** forward() for `proto: 'tls'`: resolves once the hostname is live; the tunnel's `url` is `tls://<host>:<port>`. */
export async function forwardTls(options: ForwardOptions): Promise<Tunnel> {
  const checked = checkedTlsSpec(options);
  const edge = await openEdge(options);
  const tunnel = await bindTcpOn(edge, checked.target as TcpTarget, options, tlsBind(options), checked.terminate);
  holdOnSecondNode(edge, [tunnel]);
  return tunnel;
}

/** The agent's own TLS context from `tlsCert`/`tlsKey`; NAME_INVALID when only one is given or they do not load. */
function terminatingContext(cert: string | Buffer | undefined, key: string | Buffer | undefined): SecureContext | undefined {
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) {
    throw new SvcError(ErrorCode.NAME_INVALID, 'a TLS certificate needs its key: give both tlsCert and tlsKey (--tls-cert and --tls-key)');
  }
  try {
    return createSecureContext({ cert, key });
  } catch (error) {
    throw new SvcError(ErrorCode.NAME_INVALID, `cannot use the TLS certificate and key: ${(error as Error).message}`);
  }
}
