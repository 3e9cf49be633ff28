import { isIP } from 'node:net';

/** The PROXY protocol versions `--proxy-protocol` sends to the local service. */
export type ProxyProtocolVersion = 'v1' | 'v2';

/** Whether `value` is a PROXY protocol version the agent can send. */
export function isProxyProtocolVersion(value: unknown): value is ProxyProtocolVersion {
  return value === 'v1' || value === 'v2';
}

/** The 12 bytes every PROXY protocol v2 header starts with. */
const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);

/** An `ip:port` (IPv6 without brackets, as the edge writes it) split at its last colon. */
export function splitAddress(address: string): { ip: string; port: number } | undefined {
  const colon = address.lastIndexOf(':');
  if (colon <= 0) return undefined;
  const ip = address.slice(0, colon);
  const port = Number(address.slice(colon + 1));
  if (isIP(ip) === 0 || !Number.isInteger(port) || port < 0 || port > 65535) return undefined;
  return { ip, port };
}

/**
 * The PROXY protocol header (haproxy's proxy-protocol.txt) that tells the local service who the
 * visitor is: `source` the visitor, `destination` the edge's public port. An address the edge
 * sent that is not an IP gives the version's "unknown" form, which a receiver accepts.
 */
export function proxyProtocolHeader(version: ProxyProtocolVersion, source: string | undefined, destinationPort: number): Buffer {
  const from = source === undefined ? undefined : splitAddress(source);
  const family = from ? isIP(from.ip) : 0;
  if (version === 'v1') {
    if (!from) return Buffer.from('PROXY UNKNOWN\r\n', 'latin1');
    const to = family === 4 ? '0.0.0.0' : '::';
    return Buffer.from(`PROXY TCP${family} ${from.ip} ${to} ${from.port} ${destinationPort}\r\n`, 'latin1');
  }
  if (!from) return Buffer.concat([V2_SIGNATURE, Buffer.from([0x20, 0x00, 0x00, 0x00])]);
  const addressBytes = family === 4 ? 12 : 36;
  const header = Buffer.alloc(16 + addressBytes);
  V2_SIGNATURE.copy(header, 0);
  header[12] = 0x21; // version 2, PROXY command
  header[13] = family === 4 ? 0x11 : 0x21; // TCP over IPv4 / IPv6
  header.writeUInt16BE(addressBytes, 14);
  const ipLength = family === 4 ? 4 : 16;
  ipBytes(from.ip, family).copy(header, 16);
  // The destination address is the edge's, which the agent does not know: all zeros.
  header.writeUInt16BE(from.port, 16 + 2 * ipLength);
  header.writeUInt16BE(destinationPort, 18 + 2 * ipLength);
  return header;
}

function ipBytes(ip: string, family: number): Buffer {
  if (family === 4) return Buffer.from(ip.split('.').map(Number));
  const [head = '', tail = ''] = ip.includes('::') ? ip.split('::') : [ip, ''];
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  const groups = [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  const out = Buffer.alloc(16);
  groups.forEach((group, index) => out.writeUInt16BE(parseInt(group, 16), index * 2));
  return out;
}
