import { isIPv6 } from 'node:net';

// The text of an IPv6 address has many spellings of the same sixteen bytes (`::` elision,
// leading zeros, a dotted-quad tail, upper or lower case), and `new URL` or a resolver may
// print any of them. Checks on what the address embeds are made on the bytes, never the text.

/** The sixteen bytes of an IPv6 address (its zone ID, if any, is ignored), or undefined when it is not one. */
export function ipv6Bytes(address: string): Uint8Array | undefined {
  if (!isIPv6(address)) return undefined;
  const zone = address.indexOf('%');
  let text = zone === -1 ? address : address.slice(0, zone);
  // A dotted-quad tail is the last two groups spelled in decimal.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [a, b, c, d] = tail.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  const groupsOf = (part: string | undefined): string[] => (part ? part.split(':') : []);
  const left = groupsOf(halves[0]);
  const right = groupsOf(halves[1]);
  const groups = halves.length === 2 ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  if (groups.length !== 8) return undefined;
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    const value = parseInt(group, 16);
    bytes[2 * i] = value >> 8;
    bytes[2 * i + 1] = value & 255;
  });
  return bytes;
}
