import type { Domain, StoredCertificate } from '../store/index.js';
import type { PemCertificate } from './dev-ca.js';
import { isValidHostname, normalizeHostname } from '../hostname/index.js';
import { OrderLimiter } from './acme-limiter.js';
import type { AcmeIssuer, AcmeIssuerOptions, IssuerStats, RenewalReport } from './acme-issuer-types.js';
import { createAcmeOrderer, describeOrderError } from './acme-order.js';
import { awaitOtherNode, ChallengeAnswers, ORDER_LEASE_MS } from './acme-shared.js';

export type { AcmeIssuer, AcmeIssuerOptions, IssuerStats, OrderOutcomeEvent, RenewalReport } from './acme-issuer-types.js';

/** Certificates expiring within this are re-ordered by the renewal loop. */
export const RENEW_BEFORE_EXPIRY_MS = 30 * 24 * 60 * 60 * 1000;
/** Certificates (PEM) kept in memory; beyond it the least recently used is read from the store again. */
export const MAX_REMEMBERED_CERTIFICATES = 1000;

type OrderOutcome = { status: 'issued'; pem: PemCertificate } | { status: 'failed' } | { status: 'deferred' };

/**
 * Creates the on-demand ACME issuer of one edge node.
 *
 * `onDemand(hostname)`, in order, each step stopping at the first answer:
 * 1. Gate: the name must be valid, outside the shared domain, covered by a
 *    verified domain, and approved by hostInUse. Otherwise: undefined, no order.
 * 2. Memory: a certificate this process already holds and that has not expired.
 * 3. Store: the `certificates` row (another node or an earlier run ordered it).
 * 4. Issue: an ACME order with HTTP-01, unless the host is backing off after a
 *    failure or the per-minute order cap is reached (then undefined).
 * A certificate served in steps 2-3 that is within renewBeforeMs of expiry also
 * starts a background renewal.
 *
 * Concurrency: concurrent onDemand calls for one name share one lookup, and
 * every order for a name (on demand or renewal) shares one flight, so a burst
 * of first handshakes places exactly one order. Flights are per process; with
 * `shared` (nodes of a cluster) a lease row per name lets one node order while
 * the others wait for the certificate it stores, and HTTP-01 answers are
 * stored so that whichever node the CA reaches gives them.
 */
export function createAcmeIssuer(options: AcmeIssuerOptions): AcmeIssuer {
  const { store, logger } = options;
  const now = options.now ?? Date.now;
  const renewBeforeMs = options.renewBeforeMs ?? RENEW_BEFORE_EXPIRY_MS;
  const sharedDomain = normalizeHostname(options.sharedDomain);
  const limiter = new OrderLimiter({
    now,
    ...(options.maxOrdersPerMinute === undefined ? {} : { maxPerMinute: options.maxOrdersPerMinute }),
    ...(options.retryAfterFailureMs === undefined ? {} : { retryAfterFailureMs: options.retryAfterFailureMs }),
  });
  const { shared } = options;
  let closed = false;
  const answers = new ChallengeAnswers(shared, now, logger);
  const order =
    options.orderer ??
    createAcmeOrderer({
      directoryUrl: options.directoryUrl,
      email: options.email,
      accounts: store.acme,
      ...(options.polling === undefined ? {} : { polling: options.polling }),
      publish: (token, keyAuthorization) => answers.publish(token, keyAuthorization),
    });
  const memory = new Map<string, { pem: PemCertificate; expiresAt: number }>();
  const lookups = new Map<string, Promise<PemCertificate | undefined>>();
  const orders = new Map<string, Promise<OrderOutcome>>();
  const stats: IssuerStats = { ordersStarted: 0, issued: 0, failed: 0 };
  let renewalTimer: NodeJS.Timeout | undefined;
  let renewalPass: Promise<unknown> | undefined;

  const isSharedDomainName = (host: string): boolean => host === sharedDomain || host.endsWith(`.${sharedDomain}`);

  /** The verified domain covering `host`, ignoring hostInUse; undefined for shared-domain names. */
  async function verifiedCovering(host: string): Promise<Domain | undefined> {
    return isSharedDomainName(host) ? undefined : store.domains.verifiedHostCovering(host);
  }

  async function gate(host: string): Promise<Domain | undefined> {
    const domain = await verifiedCovering(host);
    if (domain === undefined || options.hostInUse === undefined) return domain;
    return (await options.hostInUse(host)) ? domain : undefined;
  }

  function remember(host: string, pem: PemCertificate, expiresAt: number): void {
    memory.delete(host);
    memory.set(host, { pem, expiresAt });
    const oldest = memory.keys().next();
    if (memory.size > MAX_REMEMBERED_CERTIFICATES && oldest.done !== true) memory.delete(oldest.value);
  }

  function issue(host: string, domain: Domain): Promise<OrderOutcome> {
    const running = orders.get(host);
    if (running !== undefined) return running;
    const permit = limiter.tryStart(host);
    if (!permit.ok) {
      logger?.info({ host, reason: permit.reason, retryAt: new Date(permit.retryAt).toISOString() }, 'acme order deferred');
      return Promise.resolve({ status: 'deferred' });
    }
    // Registered synchronously, before the first await, so every caller after this one joins it.
    const flight = runOrder(host, domain).finally(() => orders.delete(host));
    orders.set(host, flight);
    return flight;
  }

  async function runOrder(host: string, domain: Domain): Promise<OrderOutcome> {
    if (shared === undefined) return placeOrder(host, domain);
    let previous: StoredCertificate | undefined;
    try {
      previous = await store.certificates.get(host);
      if (!(await shared.repo.acquireOrder(host, shared.nodeId, now(), now() + ORDER_LEASE_MS))) {
        const cert = await awaitOtherNode(shared, store.certificates, host, previous, now, () => closed);
        if (cert === undefined) return { status: 'deferred' };
        return fromStore(host, cert);
      }
    } catch (err) {
      logger?.warn({ host, err }, 'acme order lease unavailable');
      return { status: 'deferred' };
    }
    try {
      // Another node may have stored it between this node's lookup and its lease.
      const stored = await store.certificates.get(host);
      if (stored !== undefined && stored.expiresAt - now() >= renewBeforeMs) return fromStore(host, stored);
      return await placeOrder(host, domain);
    } finally {
      await shared.repo
        .releaseOrder(host, shared.nodeId)
        .catch((err: unknown) => logger?.warn({ host, err }, 'acme order lease not released; it expires by itself'));
    }
  }

  function fromStore(host: string, cert: StoredCertificate): OrderOutcome {
    limiter.succeeded(host);
    const pem = { certPem: cert.certPem, keyPem: cert.keyPem };
    remember(host, pem, cert.expiresAt);
    logger?.info({ host, expiresAt: new Date(cert.expiresAt).toISOString() }, 'acme certificate ordered by another node');
    return { status: 'issued', pem };
  }

  async function placeOrder(host: string, domain: Domain): Promise<OrderOutcome> {
    stats.ordersStarted += 1;
    let previous: StoredCertificate | undefined;
    try {
      previous = await store.certificates.get(host);
      // A renewal keeps showing `issued`: the old certificate still serves meanwhile.
      if (!(previous !== undefined && previous.expiresAt > now())) await store.domains.setCertState(domain.host, 'pending');
      const cert = await order(host);
      await store.certificates.put({ host, ...cert, issuedAt: now() });
      await store.domains.setCertState(domain.host, 'issued', undefined, cert.expiresAt);
      limiter.succeeded(host);
      stats.issued += 1;
      const pem = { certPem: cert.certPem, keyPem: cert.keyPem };
      remember(host, pem, cert.expiresAt);
      logger?.info({ host, expiresAt: new Date(cert.expiresAt).toISOString() }, 'acme certificate issued');
      options.onOutcome?.({ host, domainHost: domain.host, issued: true, expiresAt: cert.expiresAt });
      return { status: 'issued', pem };
    } catch (err) {
      const reason = describeOrderError(err);
      const retryAt = limiter.failed(host);
      stats.failed += 1;
      logger?.warn({ host, reason, retryAt: new Date(retryAt).toISOString() }, 'acme order failed');
      const stillServing = previous !== undefined && previous.expiresAt > now();
      await store.domains
        .setCertState(domain.host, stillServing ? 'issued' : 'failed', stillServing ? `renewal failed: ${reason}` : reason)
        .catch((storeErr: unknown) => logger?.error({ err: storeErr, host }, 'recording acme failure failed'));
      options.onOutcome?.({ host, domainHost: domain.host, issued: false, reason });
      return { status: 'failed' };
    }
  }

  function serve(host: string, domain: Domain, pem: PemCertificate, expiresAt: number): PemCertificate {
    if (expiresAt - now() < renewBeforeMs) void issue(host, domain);
    return pem;
  }

  async function lookup(host: string): Promise<PemCertificate | undefined> {
    const domain = await gate(host);
    if (domain === undefined) return undefined;
    const held = memory.get(host);
    if (held !== undefined && held.expiresAt > now()) return serve(host, domain, held.pem, held.expiresAt);
    const stored = await store.certificates.get(host);
    if (stored !== undefined && stored.expiresAt > now()) {
      const pem = { certPem: stored.certPem, keyPem: stored.keyPem };
      remember(host, pem, stored.expiresAt);
      return serve(host, domain, pem, stored.expiresAt);
    }
    const outcome = await issue(host, domain);
    return outcome.status === 'issued' ? outcome.pem : undefined;
  }

  async function renewDue(): Promise<RenewalReport> {
    const report: RenewalReport = { renewed: 0, failed: 0, deferred: 0, removed: 0 };
    for (const cert of await store.certificates.listExpiringBefore(now() + renewBeforeMs)) {
      const domain = await verifiedCovering(cert.host);
      if (domain === undefined) {
        // The domain was deleted or lost its verification: the key has no business staying.
        await store.certificates.delete(cert.host);
        memory.delete(cert.host);
        report.removed += 1;
        continue;
      }
      if (options.hostInUse !== undefined && !(await options.hostInUse(cert.host))) {
        report.deferred += 1;
        continue;
      }
      const outcome = await issue(cert.host, domain);
      if (outcome.status === 'issued') report.renewed += 1;
      else if (outcome.status === 'failed') report.failed += 1;
      else report.deferred += 1;
    }
    return report;
  }

  return {
    async isServedHost(hostname) {
      const host = normalizeHostname(hostname);
      return isValidHostname(host) && (await gate(host)) !== undefined;
    },

    onDemand(hostname) {
      const host = normalizeHostname(hostname);
      if (!isValidHostname(host)) return Promise.resolve(undefined);
      const running = lookups.get(host);
      if (running !== undefined) return running;
      const flight = lookup(host).finally(() => lookups.delete(host));
      lookups.set(host, flight);
      return flight;
    },

    challengeResponse: (token) => answers.answer(token),
    renewDue,

    startRenewal(intervalMs) {
      if (renewalTimer !== undefined) return;
      const pass = (): void => {
        if (renewalPass !== undefined) return;
        renewalPass = renewDue()
          .then((report) => logger?.info(report, 'acme renewal pass'))
          .catch((err: unknown) => logger?.error({ err }, 'acme renewal pass failed'))
          .finally(() => (renewalPass = undefined));
      };
      pass();
      // unref: a pending renewal tick must not keep the process alive at shutdown.
      renewalTimer = setInterval(pass, intervalMs).unref();
    },

    forget(hostname) {
      memory.delete(normalizeHostname(hostname));
    },

    stats: () => ({ ...stats }),

    async close() {
      closed = true;
      clearInterval(renewalTimer);
      renewalTimer = undefined;
      await renewalPass;
      await Promise.allSettled([...orders.values()]);
    },
  };
}
