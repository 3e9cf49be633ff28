import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { createSecureContext, type SecureContext } from 'node:tls';
import { BindMessages, ErrorCode, SvcError } from '@svcrouter/protocol';
import type { AccessOptions } from './access.js';
import { envDefault } from './env-defaults.js';
import type { BindRequest } from './session-tunnel.js';

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

/**
 * What a TLS tunnel carries besides its target, checked before dialling: no access rules
 * (POLICY_INVALID), and the agent's own certificate and key together, loaded (NAME_INVALID).
 * Answers the context to terminate TLS with, or undefined when the local service does.
 */
export function checkedTlsOptions(spec: TlsForwardOptions & AccessOptions): SecureContext | undefined {
  if (ACCESS_KEYS.some((key) => spec[key] !== undefined)) throw new SvcError(ErrorCode.POLICY_INVALID, BindMessages.tlsNoAccess);
  return terminatingContext(spec.tlsCert, spec.tlsKey);
}

/** The bind's name of a TLS tunnel: its subdomain or domain (SVC_SUBDOMAIN / SVC_DOMAIN by default), else a random one. */
export function tlsBind(options: {
  subdomain?: string | undefined;
  domain?: string | undefined;
}): Pick<BindRequest, 'subdomain' | 'domain'> {
  const name: Pick<BindRequest, 'subdomain' | 'domain'> = {};
  const subdomain = options.subdomain ?? envDefault('SVC_SUBDOMAIN');
  const domain = options.domain ?? envDefault('SVC_DOMAIN');
  if (subdomain !== undefined) name.subdomain = subdomain;
  if (domain !== undefined) name.domain = domain;
  return name;
}

/**
 * The agent's own TLS context from `tlsCert`/`tlsKey`; NAME_INVALID when only one is given, either
 * does not parse, or the key is not the certificate's. createSecureContext alone takes an empty
 * or mismatched pair and leaves every visitor's handshake to fail, so both are parsed and matched
 * here, where the start can still say which is wrong.
 */
function terminatingContext(cert: string | Buffer | undefined, key: string | Buffer | undefined): SecureContext | undefined {
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) {
    throw new SvcError(ErrorCode.NAME_INVALID, 'a TLS certificate needs its key: give both tlsCert and tlsKey (--tls-cert and --tls-key)');
  }
  const certName = 'the TLS certificate (tlsCert, --tls-cert)';
  const keyName = 'the TLS key (tlsKey, --tls-key)';
  if (cert.toString().trim() === '') throw new SvcError(ErrorCode.NAME_INVALID, `${certName} is empty`);
  if (key.toString().trim() === '') throw new SvcError(ErrorCode.NAME_INVALID, `${keyName} is empty`);
  let leaf: X509Certificate;
  try {
    // The first certificate of a chain is the one the key must match.
    leaf = new X509Certificate(cert);
  } catch (error) {
    throw new SvcError(ErrorCode.NAME_INVALID, `${certName} is not a PEM certificate (${reason(error)})`);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(key);
  } catch (error) {
    throw new SvcError(ErrorCode.NAME_INVALID, `${keyName} is not an unencrypted PEM private key (${reason(error)})`);
  }
  if (!leaf.checkPrivateKey(privateKey)) {
    throw new SvcError(
      ErrorCode.NAME_INVALID,
      `${keyName} is not the key of ${certName}, whose subject is ${leaf.subject.replace(/\n/g, ', ')}`,
    );
  }
  try {
    return createSecureContext({ cert, key });
  } catch (error) {
    throw new SvcError(ErrorCode.NAME_INVALID, `cannot use the TLS certificate and key: ${reason(error)}`);
  }
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
