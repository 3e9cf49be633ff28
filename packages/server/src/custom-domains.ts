import type { Logger } from 'pino';
import type { DomainRouteDeps } from './api/index.js';
import { CertificateCache, createAcmeIssuer, type AcmeIssuer, type OrderOutcomeEvent, type SniResolverOptions } from './certs/index.js';
import type { ServerConfig } from './config.js';
import {
  cascadeDomainRemoval,
  checkDomainBinding,
  hostInUse,
  hostOwner,
  ownsCustomHost,
  ServedCertificates,
  type DomainRemovalDeps,
} from './domains/index.js';
import type { DomainDecision, Edge, EdgeDeps, Fleet } from './edge/index.js';
import type { HostOwner } from './inspector/index.js';
import { Registry } from './metrics/index.js';
import type { Store } from './store/index.js';

// Custom domains wired together for one node: the on-demand ACME issuer and what the
// TLS listener, the edge, the API and the inspector need from it. server.ts composes it.

/**
 * acme-client's status polling: its default waits 5 s before the first re-check, and a
 * visitor's first TLS handshake waits on the order, so poll sooner (0.25 s doubling to
 * 4 s, 30 checks: about a minute and a half at most).
 */
export const ACME_POLLING = Object.freeze({ minMs: 250, maxMs: 4000, attempts: 30 });
/** How often the renewal loop looks for certificates within 30 days of expiry. */
export const RENEWAL_CHECK_MS = 6 * 60 * 60 * 1000;

/** The custom-domain parts of one node. */
export interface CustomDomains {
  issuer: AcmeIssuer;
  /** For createSniResolver: custom hosts get ACME certificates on demand; `cache` is the resolver's. */
  sni: Required<Pick<SniResolverOptions, 'isServedHost' | 'onDemand' | 'cache'>>;
  /** For the Edge: SVC_DOMAIN checks, reclaim after a reconnect, HTTP-01 answers. */
  edge: Required<Pick<EdgeDeps, 'checkDomain' | 'ownsCustomHost' | 'acmeChallenge'>>;
  /** For controlPlaneRoutes. */
  routes: Omit<DomainRouteDeps, 'store' | 'limitsFor'>;
  /** svc_acme_orders_total, svc_acme_certificates_issued_total, svc_acme_orders_failed_total: appended to GET /metrics. */
  metrics: { render(): string };
  /** Inspector owner of a hostname without a live binding: its tunnel row, else the verified domain covering it. */
  ownerOf(host: string): Promise<HostOwner | undefined>;
  /**
   * Drops from memory the certificates of names at or under a removed domain that no verified
   * domain covers any more: another node removed it (the cluster bus says so).
   */
  forgetRemoved(domainHost: string): Promise<void>;
  /** Starts background renewal. */
  start(): void;
  /** Stops renewal and waits for orders in flight; call before the store closes. */
  close(): Promise<void>;
}

/**
 * Wires the issuer to the store, the config, this node's edge and the fleet (both read lazily:
 * they are built after the TLS options; the fleet is the cluster's when the node joined one).
 */
export function createCustomDomains(
  config: ServerConfig,
  store: Store,
  log: Logger,
  edge: () => Edge,
  fleet: () => Fleet = edge,
  nodeId?: string,
  onCertificate?: (outcome: OrderOutcomeEvent) => void,
): CustomDomains {
  const acmeLog = log.child({ component: 'acme' });
  // Nodes of a cluster share HTTP-01 answers and take turns ordering through the store. A
  // single node keeps its answers in memory: it alone orders and answers, so writing them to
  // the database would only add a write per challenge and a read per CA fetch.
  const shared = config.cluster !== undefined && nodeId !== undefined ? { repo: store.acmeShared, nodeId } : undefined;
  const issuer = createAcmeIssuer({
    ...(shared === undefined ? {} : { shared }),
    store,
    directoryUrl: config.acmeDirectory,
    email: config.acmeEmail,
    sharedDomain: config.sharedDomain,
    hostInUse: (host) =>
      hostInUse(
        store,
        (name) => edge().router.resolve(name) !== undefined,
        host,
        (name) => edge().tlsPassthrough.isTlsHost(name),
      ),
    logger: acmeLog,
    polling: ACME_POLLING,
    ...(onCertificate === undefined ? {} : { onOutcome: onCertificate }),
  });
  const cache = new CertificateCache();
  const served = new ServedCertificates({
    domains: store.domains,
    forget(name) {
      cache.delete(name);
      issuer.forget(name);
    },
  });
  const removal: DomainRemovalDeps = {
    store,
    liveBindings: (accountId) => fleet().liveBindings(accountId),
    releaseTunnel: (tunnelId, reason) => fleet().releaseTunnel(tunnelId, reason),
    certificates: served,
    forgetElsewhere: (domainHost) => fleet().forgetCertificates(domainHost),
    log,
  };

  const registry = new Registry();
  registry.collect(
    'svc_acme_orders_total',
    'ACME orders started by this node (on demand and renewals).',
    'counter',
    () => issuer.stats().ordersStarted,
  );
  registry.collect(
    'svc_acme_certificates_issued_total',
    'ACME orders that returned a certificate.',
    'counter',
    () => issuer.stats().issued,
  );
  registry.collect(
    'svc_acme_orders_failed_total',
    'ACME orders that failed (the host then backs off).',
    'counter',
    () => issuer.stats().failed,
  );

  let renewing = false;
  return {
    metrics: registry,
    issuer,
    sni: {
      cache,
      isServedHost: (host) => issuer.isServedHost(host),
      async onDemand(host) {
        const pem = await issuer.onDemand(host);
        if (pem !== undefined) served.add(host);
        return pem;
      },
    },
    edge: {
      checkDomain: (accountId, domain, subdomain): Promise<DomainDecision> =>
        checkDomainBinding(store.domains, config.sharedDomain, accountId, domain, subdomain),
      ownsCustomHost: (accountId, hostname) => ownsCustomHost(store.domains, accountId, hostname),
      acmeChallenge: (token) => issuer.challengeResponse(token),
    },
    routes: {
      sharedDomain: config.sharedDomain,
      dnsServers: config.dnsServers,
      edgeTarget: config.edgeTarget,
      onDomainRemoved: (domain) =>
        cascadeDomainRemoval(removal, domain).catch((err: unknown) =>
          log.error({ err, domainId: domain.id }, 'cleanup after domain removal failed'),
        ),
    },
    ownerOf: (host) => hostOwner(store, host),
    async forgetRemoved(domainHost) {
      await served.forgetUnder(domainHost);
    },
    start() {
      if (renewing) return;
      renewing = true;
      issuer.startRenewal(RENEWAL_CHECK_MS);
    },
    async close() {
      await issuer.close();
      acmeLog.info(issuer.stats(), 'acme issuer stopped');
    },
  };
}
