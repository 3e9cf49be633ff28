import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { Logger } from 'pino';
import { CertificateCache, type CachedCertificate } from './certificate-cache.js';
import type { DevCa, PemCertificate } from './dev-ca.js';
import { isValidHostname, normalizeHostname } from '../hostname/index.js';

/** What the edge knows when it builds its TLS listener. */
export interface SniResolverOptions {
  /** Shared domain, e.g. `localhost` (the default of SVC_SHARED_DOMAIN); tunnels live one label under it. */
  sharedDomain: string;
  /** Returned by `contextFor("")` (no SNI); default: the shared-domain apex context. */
  defaultContext?: SecureContext;
  /** Mints shared-domain certificates when `staticCert` is absent. */
  devCa?: DevCa;
  /** Operator wildcard for the shared domain (SVC_TLS_CERT / SVC_TLS_KEY); when given, devCa is not used for it. */
  staticCert?: PemCertificate;
  /** Decision hook for every other hostname (verified custom domain?); must say yes before `onDemand` runs. */
  isServedHost: (hostname: string) => boolean | Promise<boolean>;
  /** Obtains a certificate for an approved hostname (ACME, later); absent: such names fail the handshake. */
  onDemand?: (hostname: string) => Promise<PemCertificate | undefined>;
  /** Cache of minted contexts; default: a new CertificateCache with its default cap. */
  cache?: CertificateCache;
  /**
   * Whether a hostname is a TLS passthrough tunnel's (its local service holds the key): the dev CA
   * never mints for it, and the edge shows it no certificate. Absent: none is.
   */
  isPassthrough?: (hostname: string) => boolean | Promise<boolean>;
  /** Where failed mints are logged; default: not logged. */
  logger?: Logger;
}

/** Node's `SNICallback` signature for `tls.createServer` / `https.createServer` / `http2.createSecureServer`. */
export type SniCallback = (servername: string, cb: (err: Error | null, ctx?: SecureContext) => void) => void;

/** Picks the TLS context for each handshake; see createSniResolver for the lookup order. */
export interface SniResolver {
  /** Pass as the server's `SNICallback`; answers with an Error for any name that is not served. */
  SNICallback: SniCallback;
  /** The context for `hostname` (normalized here), or undefined when it is not served. */
  contextFor(hostname: string): Promise<SecureContext | undefined>;
  /** The apex certificate for the server's own `cert`/`key`, which Node uses when a client sends no SNI; mints anew on each call when from the dev CA. */
  defaultCertificate(): Promise<PemCertificate>;
}

/**
 * Creates the SNI resolver of the edge.
 *
 * Servername handling, in order, each step stopping at the first answer:
 * 1. Normalize: lower-case, drop one trailing dot. Empty or an IP literal counts as no
 *    SNI and gets `defaultContext` or the apex certificate.
 * 2. Reject without any work a name that is not a DNS hostname or is over 253 characters.
 * 3. Shared domain (the apex or exactly one label under it): the static wildcard
 *    context if given; otherwise memory cache → mint from devCa (dev leaves are not stored).
 * 4. Any other name: memory cache → `isServedHost` must say yes → `onDemand` (the ACME
 *    issuer: its stored certificate, else a new order). Without `onDemand`, nothing is
 *    asked and the name fails.
 *
 * Concurrent handshakes for one name share one mint (CertificateCache single flight).
 * A failed or refused name is not cached, so the next handshake asks again.
 *
 * Node never calls SNICallback for a client that sends no SNI (e.g. one dialling an
 * IP); it uses the server's own `cert`/`key`, so create the server with
 * `defaultCertificate()`.
 */
export function createSniResolver(options: SniResolverOptions): SniResolver {
  const { devCa, onDemand, isServedHost, logger } = options;
  const sharedDomain = normalizeHostname(options.sharedDomain);
  if (!isValidHostname(sharedDomain)) throw new Error(`invalid shared domain ${JSON.stringify(options.sharedDomain)}`);
  if (options.staticCert === undefined && devCa === undefined) {
    throw new Error('shared-domain certificates need either staticCert or devCa');
  }
  const cache = options.cache ?? new CertificateCache();
  // Built once at boot, so a bad SVC_TLS_CERT/KEY fails start-up rather than a handshake.
  const staticContext =
    options.staticCert === undefined
      ? undefined
      : createSecureContext({ cert: options.staticCert.certPem, key: options.staticCert.keyPem });

  function isSharedDomainHost(host: string): boolean {
    if (host === sharedDomain) return true;
    if (!host.endsWith(`.${sharedDomain}`)) return false;
    const label = host.slice(0, -(sharedDomain.length + 1));
    return !label.includes('.');
  }

  async function resolve(host: string): Promise<SecureContext | undefined> {
    if (isSharedDomainHost(host)) {
      if (staticContext !== undefined) return staticContext;
      if (devCa === undefined) return undefined;
      const { isPassthrough } = options;
      return cache.get(host, async () => {
        if (isPassthrough !== undefined && (await isPassthrough(host))) return undefined;
        return toCachedCertificate(await devCa.issueLeaf(host));
      });
    }
    if (onDemand === undefined) return undefined;
    return cache.get(host, async () => {
      if (!(await isServedHost(host))) return undefined;
      const pem = await onDemand(host);
      return pem === undefined ? undefined : toCachedCertificate(pem);
    });
  }

  function contextFor(servername: string): Promise<SecureContext | undefined> {
    const host = normalizeHostname(servername);
    if (host === '' || isIP(host) !== 0) {
      return options.defaultContext !== undefined ? Promise.resolve(options.defaultContext) : resolve(sharedDomain);
    }
    if (!isValidHostname(host)) return Promise.resolve(undefined);
    return resolve(host);
  }

  const SNICallback: SniCallback = (servername, cb) => {
    // Two-argument then(): a throw inside cb must not call cb a second time.
    contextFor(servername).then(
      (context) => {
        if (context !== undefined) return cb(null, context);
        logger?.debug({ servername: servername.slice(0, 253) }, 'tls servername not served');
        cb(new Error('no certificate for this servername'));
      },
      (err: unknown) => {
        logger?.warn({ err, servername }, 'tls certificate lookup failed');
        cb(err instanceof Error ? err : new Error(String(err)));
      },
    );
  };

  async function defaultCertificate(): Promise<PemCertificate> {
    if (options.staticCert !== undefined) return options.staticCert;
    if (devCa === undefined) throw new Error('unreachable: checked at creation');
    return devCa.issueLeaf(sharedDomain);
  }

  return { SNICallback, contextFor, defaultCertificate };
}

/** Builds the TLS context and reads the leaf's expiry, which the cache uses to refresh it. */
function toCachedCertificate(pem: PemCertificate): CachedCertificate {
  const context = createSecureContext({ cert: pem.certPem, key: pem.keyPem });
  // Node's X509Certificate reads the first certificate of a chain: the leaf.
  const notAfter = new Date(new X509Certificate(pem.certPem).validTo);
  if (Number.isNaN(notAfter.getTime())) throw new Error('certificate has an unreadable notAfter');
  return { context, notAfter };
}
