import { isIP } from 'node:net';

// The one home of what a DNS hostname is on this server: the edge's Host routing, the
// certificates, custom domains and the config all check names with these rules.

/** Longest DNS name in presentation form (RFC 1035 §2.3.4, without the trailing dot). */
export const MAX_HOSTNAME_LENGTH = 253;

// One LDH label: letters, digits and inner hyphens, 1 to 63 characters. Underscores are
// left out on purpose: public CAs and browsers reject them in a certificate's dNSName.
const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** True for one lower-case LDH label: a-z, 0-9 and inner hyphens, 1 to 63 characters. */
export function isDnsLabel(label: string): boolean {
  return DNS_LABEL.test(label);
}

/** True when a lower-case name is at most 253 characters of LDH labels (an IPv4 literal passes). */
export function hasDnsLabels(name: string): boolean {
  // The length check comes first so a hostile 64 KiB name costs no splitting.
  return name.length <= MAX_HOSTNAME_LENGTH && name.split('.').every(isDnsLabel);
}

/** Lower-cases a name and drops one trailing dot, so `ABC.localhost.` and `abc.localhost` share a certificate. */
export function normalizeHostname(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** True when `hostname` (already normalized) is a DNS hostname a certificate can name: not an IP, LDH labels, at most 253 characters. */
export function isValidHostname(hostname: string): boolean {
  if (hostname.length === 0 || hostname.length > MAX_HOSTNAME_LENGTH) return false;
  if (isIP(hostname) !== 0) return false;
  return hasDnsLabels(hostname);
}
