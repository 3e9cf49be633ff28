import { isIP } from 'node:net';
import { MAX_HOSTNAME_LENGTH } from '../hostname/index.js';

/**
 * Normalises a Host header or SNI name for routing: lower-cased, port and trailing dot
 * removed, IPv6 brackets kept. Returns undefined for an empty or absurd value.
 */
export function normalizeHost(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let host = raw.trim().toLowerCase();
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    if (close < 0) return undefined;
    host = host.slice(0, close + 1);
  } else {
    const colon = host.indexOf(':');
    if (colon >= 0) host = host.slice(0, colon);
  }
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host.length === 0 || host.length > MAX_HOSTNAME_LENGTH) return undefined;
  return host;
}

/** True for an IP literal host (with or without IPv6 brackets). */
export function isIpHost(host: string): boolean {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  return isIP(bare) !== 0;
}

/** Subdomains of the shared domain that are never handed to tunnels. */
export const RESERVED_LABELS = new Set(['www', 'api', 'admin']);
