import type { Logger } from 'pino';
import type { Domain, Store } from '../store/index.js';
import { isAtOrUnder } from './domain-binding.js';

/** A live binding of this node, as the removal cascade sees it. */
export interface RemovableBinding {
  tunnelId: string;
  hostname: string;
  url: string;
}

/** What the cascade after a domain removal reaches: the store, this node's edge and its certificates. */
export interface DomainRemovalDeps {
  store: Pick<Store, 'domains' | 'tunnels' | 'certificates'>;
  /** The account's live bindings on this node. */
  liveBindings(accountId: string): Iterable<RemovableBinding>;
  /** Closes a tunnel with a sentence for its agent; true when it was live here. */
  releaseTunnel(tunnelId: string, reason: string): boolean;
  /** Custom hosts that got a certificate in this process; the cascade removes what it forgets. */
  served: Set<string>;
  /** Drops a certificate from memory (the SNI cache and the issuer). */
  forgetCertificate(name: string): void;
  log: Logger;
}

/**
 * After a domain is removed: closes the account's tunnels under it and forgets their
 * certificates, unless another verified domain of the account still covers the name.
 */
export async function cascadeDomainRemoval(deps: DomainRemovalDeps, domain: Domain): Promise<void> {
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
  const names = new Set([domain.host, ...deps.served]);
  for (const tunnel of await store.tunnels.listForAccount(domain.accountId)) names.add(tunnel.hostname);
  let forgotten = 0;
  for (const name of names) {
    if (!isAtOrUnder(name, domain.host) || (await store.domains.verifiedHostCovering(name)) !== undefined) continue;
    deps.forgetCertificate(name);
    deps.served.delete(name);
    if (await store.certificates.delete(name)) forgotten++;
  }
  deps.log.info(
    { domainId: domain.id, host: domain.host, closedTunnels: closed, forgottenCertificates: forgotten },
    'custom domain removed',
  );
}
