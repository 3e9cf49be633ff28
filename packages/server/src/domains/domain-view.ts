import type { Domain, StoredCertificate } from '../store/index.js';
import { txtRecordName } from './txt-record.js';

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/** The domain as the API shows it: the TXT record to publish and the certificate state; never a key. */
export function domainView(domain: Domain): Record<string, unknown> {
  return {
    id: domain.id,
    host: domain.host,
    state: domain.state,
    verified: domain.state === 'verified',
    txtRecord: { type: 'TXT', name: txtRecordName(domain.host), value: domain.txtValue },
    verifiedAt: iso(domain.verifiedAt),
    createdAt: iso(domain.createdAt),
    certificate: { state: domain.certState, error: domain.certError ?? null, expiresAt: iso(domain.certExpiresAt) },
  };
}

/** A stored certificate as an operator view may show it: which name, until when; the PEMs stay out. */
export function certificateView(cert: StoredCertificate): Record<string, unknown> {
  return { host: cert.host, expiresAt: iso(cert.expiresAt), issuedAt: iso(cert.issuedAt) };
}
