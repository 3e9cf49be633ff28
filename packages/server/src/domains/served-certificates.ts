import type { Store } from '../store/index.js';
import { isAtOrUnder } from './domain-binding.js';

/** What forgetting a removed domain's certificates reaches. */
export interface ServedCertificatesDeps {
  domains: Pick<Store['domains'], 'verifiedHostCovering'>;
  /** Drops a certificate from memory (the SNI cache and the issuer). */
  forget(name: string): void;
}

/**
 * The custom hosts that got a certificate in this process, and the one loop that forgets
 * them when their domain is removed, here or (told over the cluster bus) on another node.
 */
export class ServedCertificates {
  private readonly names = new Set<string>();

  constructor(private readonly deps: ServedCertificatesDeps) {}

  /** Notes a custom host that got a certificate in this process. */
  add(host: string): void {
    this.names.add(host);
  }

  /**
   * Drops from memory the certificates of `domainHost` and of the names at or under it (those
   * served here, and `others`) that no verified domain covers any more. Returns the names dropped.
   */
  async forgetUnder(domainHost: string, others: Iterable<string> = []): Promise<string[]> {
    const forgotten: string[] = [];
    for (const name of new Set([domainHost, ...this.names, ...others])) {
      if (!isAtOrUnder(name, domainHost) || (await this.deps.domains.verifiedHostCovering(name)) !== undefined) continue;
      this.deps.forget(name);
      this.names.delete(name);
      forgotten.push(name);
    }
    return forgotten;
  }
}
