import type { Logger } from 'pino';
import type { DomainRouteDeps } from './api/index.js';
import { CertificateCache, createAcmeIssuer, type AcmeIssuer, type OrderOutcomeEvent, type SniResolverOptions } from './certs/index.js';
import type { ServerConfig } from './config.js';
import { cascadeDomainRemoval, checkDomainBinding, isAtOrUnder, ownsCustomHost, type RemovableBinding } from './domains/index.js';
import type { DomainDecision, Edge, EdgeDeps } from './edge/index.js';
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

/** Wires the issuer to the store, the edge (read lazily: it is built after the TLS options) and the config. */
/** With several edge nodes: the account's bindings on every node, and release wherever a tunnel is held. */
export interface ClusterReach {
  liveBindings(accountId: string, local: Iterable<RemovableBinding>): Iterable<RemovableBinding>;
  releaseTunnel(tunnelId: string, reason: string): boolean;
  /** Tells every other node to drop the certificates a domain removal forgot. */
  forgetCertificates(domainHost: string): void;
}

export function createCustomDomains(
  config: ServerConfig,
  store: Store,
  log: Logger,
  edge: () => Edge,
  cluster: () => ClusterReach | undefined = () => undefined,
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
    hostInUse,
    logger: acmeLog,
    polling: ACME_POLLING,
    ...(onCertificate === undefined ? {} : { onOutcome: onCertificate }),
  });
  const cache = new CertificateCache();
  /** Custom hosts that got a certificate in this process: what a domain removal must drop from memory. */
  const served = new Set<string>();

  /**
   * The issuer's second gate, after "a verified domain covers the name": a certificate is
   * ordered only for a verified host itself, a name with a live binding, or a name that has
   * a tunnel row (pinned custom names stay listed while offline). Random names under a
   * verified domain (`x7f3.app.example.com`) therefore never place an order, so SNI
   * scanners cannot spend the CA's rate limits; such names fail the handshake.
   */
  async function hostInUse(host: string): Promise<boolean> {
    if (edge().router.resolve(host) !== undefined) return true;
    if ((await store.domains.byHost(host)).some((d) => d.state === 'verified')) return true;
    return (await store.tunnels.byHostname(host)) !== undefined;
  }

  function* localBindings(accountId: string): Generator<RemovableBinding> {
    for (const session of edge().sessions) if (session.accountId === accountId) yield* session.bindings.values();
  }

  const removal = {
    store,
    liveBindings(accountId: string): Iterable<RemovableBinding> {
      const local = localBindings(accountId);
      return cluster()?.liveBindings(accountId, local) ?? local;
    },
    releaseTunnel: (tunnelId: string, reason: string) =>
      cluster()?.releaseTunnel(tunnelId, reason) ?? edge().releaseTunnel(tunnelId, reason),
    served,
    forgetCertificate(name: string) {
      cache.delete(name);
      issuer.forget(name);
    },
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
        cascadeDomainRemoval(removal, domain)
          .catch((err: unknown) => log.error({ err, domainId: domain.id }, 'cleanup after domain removal failed'))
          // After the store lost the certificates, so no node loads them again.
          .finally(() => cluster()?.forgetCertificates(domain.host)),
    },
    async ownerOf(host) {
      const tunnel = await store.tunnels.byHostname(host);
      if (tunnel) return { accountId: tunnel.accountId, tunnelId: tunnel.id };
      const domain = await store.domains.verifiedHostCovering(host);
      return domain && { accountId: domain.accountId, tunnelId: undefined };
    },
    async forgetRemoved(domainHost) {
      for (const name of new Set([domainHost, ...served])) {
        if (!isAtOrUnder(name, domainHost) || (await store.domains.verifiedHostCovering(name)) !== undefined) continue;
        removal.forgetCertificate(name);
        served.delete(name);
      }
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
