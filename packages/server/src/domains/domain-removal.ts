import type { Logger } from 'pino';
import type { Domain, Store } from '../store/index.js';
import { isAtOrUnder } from './domain-binding.js';
import type { ServedCertificates } from './served-certificates.js';

/** A live binding, as the removal cascade sees it. */
export interface RemovableBinding {
  tunnelId: string;
  hostname: string;
  url: string;
}

/** What the cascade after a domain removal reaches: the store, the live tunnels and the certificates. */
export interface DomainRemovalDeps {
  store: Pick<Store, 'domains' | 'tunnels' | 'certificates'>;
  /** The account's live bindings (on every node of a cluster). */
  liveBindings(accountId: string): Iterable<RemovableBinding>;
  /** Closes a tunnel with a sentence for its agent; true when it was live. */
  releaseTunnel(tunnelId: string, reason: string): boolean;
  /** Certificates this process served; the cascade forgets those the removal uncovers. */
  certificates: Pick<ServedCertificates, 'forgetUnder'>;
  /** Tells the other nodes of a cluster to forget the domain's certificates too. */
  forgetElsewhere(domainHost: string): void;
  log: Logger;
}

/**
 * After a domain is removed: closes the account's tunnels under it and forgets their
 * certificates, unless another verified domain of the account still covers the name; then
 * (even when that failed) tells the other nodes, once the store has lost the certificates,
 * so that no node loads them again.
 */
export async function cascadeDomainRemoval(deps: DomainRemovalDeps, domain: Domain): Promise<void> {
  try {
    await closeAndForget(deps, domain);
  } finally {
    deps.forgetElsewhere(domain.host);
  }
}

async function closeAndForget(deps: DomainRemovalDeps, domain: Domain): Promise<void> {
  const { store } = deps;
  const stillOwned = async (hostname: string): Promise<boolean> =>
    (await store.domains.verifiedHostCovering(hostname))?.accountId === domain.accountId;
  let closed = 0;
  for (const binding of [...deps.liveBindings(domain.accountId)]) {
    if (!isAtOrUnder(binding.hostname, domain.host) || (await stillOwned(binding.hostname))) continue;
    const reason = `custom domain ${domain.host} was removed from the account; ${binding.url} is closed`;
    if (deps.releaseTunnel(binding.tunnelId, reason)) closed++;
  }
  // Certificates exist only for names the issuer's gate allowed: the host, names bound in this
  // process, and names with a tunnel row. Others a past process ordered are refused by the
  // gate from now on, and deleted by the renewal loop.
  const rows = (await store.tunnels.listForAccount(domain.accountId)).map((tunnel) => tunnel.hostname);
  let forgotten = 0;
  for (const name of await deps.certificates.forgetUnder(domain.host, rows)) {
    if (await store.certificates.delete(name)) forgotten++;
  }
  deps.log.info(
    { domainId: domain.id, host: domain.host, closedTunnels: closed, forgottenCertificates: forgotten },
    'custom domain removed',
  );
}
