import { isIP } from 'node:net';
import { domainToASCII, domainToUnicode } from 'node:url';
import { isDnsLabel, MAX_HOSTNAME_LENGTH } from '../hostname/index.js';

/** Why a user-supplied host was refused. */
export type HostErrorCode = 'host_empty' | 'host_invalid' | 'host_ip' | 'host_single_label' | 'host_shared_domain' | 'host_too_long';

/** A normalised host, or why it was refused (with a sentence for the user). */
export type HostCheck = { ok: true; host: string } | { ok: false; code: HostErrorCode; message: string };

// The WHATWG host parser reads a name whose last label is a number as IPv4
// (`1.2.3` → 1.2.0.3, `0x7f.1` → 127.0.0.1), so such names are addresses, not hosts.
const NUMERIC_LABEL = /^(?:0x[0-9a-f]*|\d+)$/i;

const refuse = (code: HostErrorCode, message: string): HostCheck => ({ ok: false, code, message });

/**
 * Validates and normalises a custom domain host: trims, lower-cases, drops one
 * trailing dot, converts IDN to punycode and checks every label survives a
 * decode/encode round trip. Refuses IP literals, single-label names, names over
 * 253 characters, and names at, under or above `sharedDomain` (the operator's).
 */
export function normalizeCustomHost(input: string, sharedDomain: string): HostCheck {
  let raw = input.trim();
  if (raw === '') return refuse('host_empty', 'Give the host name to add, such as app.example.com.');
  if (raw.length > 4 * MAX_HOSTNAME_LENGTH) return tooLong();
  if (/[/:@?#]/.test(raw) && isIP(raw.replace(/^\[|\]$/g, '')) === 0) {
    return refuse('host_invalid', 'Give only the host name, such as app.example.com, without a scheme, port or path.');
  }
  if (raw.endsWith('.')) raw = raw.slice(0, -1);
  const lastLabel = raw.slice(raw.lastIndexOf('.') + 1);
  if (isIP(raw.replace(/^\[|\]$/g, '')) !== 0 || NUMERIC_LABEL.test(lastLabel)) {
    return refuse('host_ip', 'IP addresses cannot be added as domains; add a host name that points at the edge instead.');
  }
  const host = domainToASCII(raw.toLowerCase());
  if (host === '' || isIP(host) !== 0) return invalid(raw);
  if (host.length > MAX_HOSTNAME_LENGTH) return tooLong();
  const labels = host.split('.');
  if (!labels.every(isValidLabel)) return invalid(raw);
  // Decoding and re-encoding must give the same name, so what the user sees
  // (Unicode) and what DNS and the certificate carry (punycode) are one name.
  if (domainToASCII(domainToUnicode(host)) !== host) return invalid(raw);
  // A valid A-label always decodes to non-ASCII. Node 24's parser keeps an undecodable
  // `xn--` label unchanged instead of failing the round trip above, so check that too.
  if (labels.some((label) => label.startsWith('xn--') && domainToUnicode(label) === label)) return invalid(raw);
  if (labels.length < 2) {
    return refuse('host_single_label', `${host} has a single label; add a full domain such as ${host}.example.com.`);
  }
  const shared = sharedDomain.toLowerCase().replace(/\.$/, '');
  if (host === shared || host.endsWith(`.${shared}`) || shared.endsWith(`.${host}`)) {
    return refuse('host_shared_domain', `${host} is part of the shared domain ${shared}; tunnels get names there without adding a domain.`);
  }
  return { ok: true, host };
}

function isValidLabel(label: string): boolean {
  if (!isDnsLabel(label)) return false;
  // `??--` is reserved for encodings (RFC 5891 §4.2.3.1); only xn-- is defined.
  return label.slice(2, 4) !== '--' || label.startsWith('xn--');
}

function invalid(raw: string): HostCheck {
  const shown = raw.length > 80 ? `${raw.slice(0, 77)}...` : raw;
  return refuse(
    'host_invalid',
    `${JSON.stringify(shown)} is not a valid host name: use letters, digits and hyphens in dot-separated labels of at most 63 characters.`,
  );
}

function tooLong(): HostCheck {
  return refuse('host_too_long', `The host name is longer than ${MAX_HOSTNAME_LENGTH} characters.`);
}
