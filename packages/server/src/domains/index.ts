// Custom domains: host validation, TXT ownership checks, DNS preflight, the API's views, the
// SVC_DOMAIN bind check, the host lookups of the ACME gate and the inspector, and what follows a
// domain's removal (its tunnels closed, its certificates forgotten once).
// May use: hostname, store, auth, certs.
export { createDnsResolver, DNS_ATTEMPT_TIMEOUT_MS } from './dns-resolver.js';
export {
  checkDomainBinding,
  domainInvalidMessage,
  domainNotAddedMessage,
  domainOtherAccountMessage,
  domainPendingMessage,
  isAtOrUnder,
  ownsCustomHost,
  type BindingDomains,
  type DomainBindDecision,
} from './domain-binding.js';
export { cascadeDomainRemoval, type DomainRemovalDeps, type RemovableBinding } from './domain-removal.js';
export { certificateView, domainView } from './domain-view.js';
export { normalizeCustomHost, type HostCheck, type HostErrorCode } from './host.js';
export { hostInUse, hostOwner, type HostOwnerRecord } from './host-lookups.js';
export {
  parseEdgeTarget,
  preflight,
  type EdgeTarget,
  type PreflightOptions,
  type PreflightResolver,
  type PreflightResult,
} from './preflight.js';
export { ServedCertificates, type ServedCertificatesDeps } from './served-certificates.js';
export { PROPAGATION_NOTE, txtFailureMessage, type TxtFailureCode } from './txt-messages.js';
export { newTxtValue, TXT_RECORD_LABEL, TXT_VALUE_PREFIX, txtRecordName } from './txt-record.js';
export { verifyTxt, type TxtCheck, type TxtResolver, type VerifyTxtOptions } from './txt-verify.js';
