import { isIP } from "node:net";

/** Longest DNS name in presentation form (RFC 1035 §2.3.4, without the trailing dot). */
export const MAX_HOSTNAME_LENGTH = 253;

// One LDH label: letters, digits and inner hyphens, 1 to 63 characters. Underscores are
// left out on purpose: public CAs and browsers reject them in a certificate's dNSName.
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Lower-cases a name and drops one trailing dot, so `ABC.localhost.` and `abc.localhost` share a certificate. */
export function normalizeHostname(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith(".") ? lower.slice(0, -1) : lower;
}

/** True when `hostname` (already normalized) is a DNS hostname a certificate can name: not an IP, LDH labels, at most 253 characters. */
export function isValidHostname(hostname: string): boolean {
  // The length check comes first so a hostile 64 KiB servername costs no splitting.
  if (hostname.length === 0 || hostname.length > MAX_HOSTNAME_LENGTH) return false;
  if (isIP(hostname) !== 0) return false;
  return hostname.split(".").every((label) => LABEL.test(label));
}
