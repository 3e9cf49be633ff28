import type { Store } from '../store/index.js';

/** Who a hostname's captured requests belong to when no agent is bound to it. */
export interface HostOwnerRecord {
  accountId: string;
  tunnelId: string | undefined;
}

/**
 * The ACME issuer's second gate, after "a verified domain covers the name": a certificate is
 * ordered only for a verified host itself, a name bound on this node, or a name that has a
 * tunnel row (pinned custom names stay listed while offline). Random names under a verified
 * domain (`x7f3.app.example.com`) therefore never place an order, so SNI scanners cannot
 * spend the CA's rate limits; such names fail the handshake. A TLS passthrough tunnel's name
 * (bound here, or with a `tls` tunnel row) never gets one.
 */
export async function hostInUse(
  store: Pick<Store, 'domains' | 'tunnels'>,
  isBoundHere: (host: string) => boolean,
  host: string,
  isTlsTunnel?: (host: string) => boolean,
): Promise<boolean> {
  // A TLS passthrough tunnel's name: its local service holds the key, the edge never gets a certificate.
  if (isTlsTunnel?.(host) === true) return false;
  const tunnel = await store.tunnels.byHostname(host);
  if (tunnel?.proto === 'tls') return false;
  if (isBoundHere(host)) return true;
  if ((await store.domains.byHost(host)).some((d) => d.state === 'verified')) return true;
  return tunnel !== undefined;
}

/** The inspector's owner of a hostname without a live binding: its tunnel row, else the verified domain covering it. */
export async function hostOwner(store: Pick<Store, 'domains' | 'tunnels'>, host: string): Promise<HostOwnerRecord | undefined> {
  const tunnel = await store.tunnels.byHostname(host);
  if (tunnel) return { accountId: tunnel.accountId, tunnelId: tunnel.id };
  const domain = await store.domains.verifiedHostCovering(host);
  return domain && { accountId: domain.accountId, tunnelId: undefined };
}
