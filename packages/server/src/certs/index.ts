// TLS certificates for the edge: the dev CA, ACME on demand and renewal (shared through the store
// by the nodes of a cluster), the certificate cache and the SNI resolver.
// May use: hostname, store, auth.
export {
  CertificateCache,
  MAX_CACHED_CERTIFICATES,
  REFRESH_BEFORE_EXPIRY_MS,
  type CachedCertificate,
  type CertificateCacheOptions,
  type CertificateLoader,
} from './certificate-cache.js';
export { DEV_CA_SUBJECT, DEV_CA_VALIDITY_DAYS, LEAF_VALIDITY_DAYS, loadOrCreateDevCa, type DevCa, type PemCertificate } from './dev-ca.js';
export { createSniResolver, type SniCallback, type SniResolver, type SniResolverOptions } from './sni-resolver.js';
export {
  createAcmeIssuer,
  RENEW_BEFORE_EXPIRY_MS,
  type AcmeIssuer,
  type AcmeIssuerOptions,
  type OrderOutcomeEvent,
} from './acme-issuer.js';
export { acmeChallengeToken, ACME_CHALLENGE_PATH } from './acme-http01.js';
