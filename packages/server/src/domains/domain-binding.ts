import { BindMessages } from '@svcrouter/protocol';
import { isDnsLabel, MAX_HOSTNAME_LENGTH } from '../hostname/index.js';
import type { Domain, DomainRepo } from '../store/index.js';
import { normalizeCustomHost } from './host.js';
import { txtRecordName } from './txt-record.js';

// Which custom hostname an agent may bind with SVC_DOMAIN (+ SVC_SUBDOMAIN), and
// the sentences it prints when it may not. A verified domain covers its host and
// every name under it; the most specific verified domain decides who owns a name.

/** The hostname to bind, or the sentence the agent prints before it exits 1. */
export type DomainBindDecision = { ok: true; hostname: string } | { ok: false; message: string };

/** The store reads the binding check needs. */
export type BindingDomains = Pick<DomainRepo, 'listForAccount' | 'verifiedHostCovering'>;

/** Agent message: SVC_DOMAIN names a host the account never added. */
export function domainNotAddedMessage(host: string): string {
  return (
    `custom domain ${host} is not added to this account. Add it with POST /v1/domains {"host":"${host}"}, ` +
    `publish the TXT record it returns, verify it with POST /v1/domains/<id>/verify, then run svc again.`
  );
}

/** Agent message: SVC_DOMAIN names a domain added but not verified yet. */
export function domainPendingMessage(domain: Pick<Domain, 'id' | 'host' | 'state' | 'txtValue'>): string {
  return (
    `custom domain ${domain.host} is not verified yet (state: ${domain.state}). ` +
    `Publish a TXT record named ${txtRecordName(domain.host)} with the value ${domain.txtValue}, ` +
    `verify it with POST /v1/domains/${domain.id}/verify, then run svc again.`
  );
}

/** Agent message: the name is covered by a domain another account verified. */
export function domainOtherAccountMessage(hostname: string): string {
  return `custom domain ${hostname} is verified by another account; this account cannot bind it.`;
}

/** Agent message: SVC_DOMAIN is not a host name we accept. */
export function domainInvalidMessage(raw: string, reason: string): string {
  return `SVC_DOMAIN ${JSON.stringify(raw.slice(0, 100))} cannot be bound: ${reason}`;
}

/**
 * Decides the hostname for SVC_DOMAIN (+ SVC_SUBDOMAIN): `<domain>` or `<sub>.<domain>`,
 * allowed when a domain verified on this account covers it and no more specific domain
 * of another account does. Otherwise says why: not added, pending (with the record to
 * publish and the verify call), or another account's. Never falls back to another name.
 */
export async function checkDomainBinding(
  domains: BindingDomains,
  sharedDomain: string,
  accountId: string,
  rawDomain: string,
  subdomain: string | undefined,
): Promise<DomainBindDecision> {
  const check = normalizeCustomHost(rawDomain, sharedDomain);
  if (!check.ok) return { ok: false, message: domainInvalidMessage(rawDomain, check.message) };
  const host = check.host;
  let hostname = host;
  if (subdomain !== undefined) {
    const label = subdomain.toLowerCase();
    if (!isDnsLabel(label)) {
      return { ok: false, message: BindMessages.subdomainInvalid(subdomain.slice(0, 100)) };
    }
    hostname = `${label}.${host}`;
    if (hostname.length > MAX_HOSTNAME_LENGTH) {
      return { ok: false, message: `${label}.${host} is longer than ${MAX_HOSTNAME_LENGTH} characters; choose a shorter SVC_SUBDOMAIN` };
    }
  }
  const covering = await domains.verifiedHostCovering(hostname);
  if (covering?.accountId === accountId) return { ok: true, hostname };
  if (covering !== undefined) return { ok: false, message: domainOtherAccountMessage(hostname) };
  const own = (await domains.listForAccount(accountId)).find((d) => d.host === host);
  return { ok: false, message: own === undefined ? domainNotAddedMessage(host) : domainPendingMessage(own) };
}

/** Whether `hostname` is covered by a domain verified on this account (a reconnecting agent's reclaim). */
export async function ownsCustomHost(
  domains: Pick<DomainRepo, 'verifiedHostCovering'>,
  accountId: string,
  hostname: string,
): Promise<boolean> {
  return (await domains.verifiedHostCovering(hostname.toLowerCase()))?.accountId === accountId;
}

/** Whether `hostname` is `host` itself or a name under it. */
export function isAtOrUnder(hostname: string, host: string): boolean {
  return hostname === host || hostname.endsWith(`.${host}`);
}
