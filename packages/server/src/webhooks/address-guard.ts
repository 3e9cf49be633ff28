import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup as lookupAll } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

// Receivers are chosen by account holders, so the server must not become their way into the
// operator's own network (server-side request forgery). A receiver address that is loopback,
// private, link-local, shared (CGNAT), multicast or otherwise not globally routable is refused,
// both when the webhook is added and again at every connect: a name could resolve to a public
// address for the first check and to 127.0.0.1 for the second (DNS rebinding).

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv6');

/** Whether an IP address is one a webhook must not reach (loopback, private, link-local, …). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family !== 6) return true;
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses reach the IPv4 inside.
  const embedded = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (embedded !== undefined) return BLOCKED.check(embedded, 'ipv4');
  const mappedHex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (mappedHex) {
    const hi = parseInt(mappedHex[1]!, 16);
    const lo = parseInt(mappedHex[2]!, 16);
    return BLOCKED.check(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, 'ipv4');
  }
  return BLOCKED.check(address, 'ipv6');
}

/** A receiver URL's host without the brackets of an IPv6 literal. */
export function urlHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** Why a receiver host may not be used (a sentence), or undefined when every address it resolves to is public. */
export async function privateAddressProblem(host: string): Promise<string | undefined> {
  if (isIP(host) !== 0) return isPrivateAddress(host) ? `${host} is a loopback, private or link-local address` : undefined;
  let addresses: LookupAddress[];
  try {
    addresses = await lookupAll(host, { all: true, verbatim: true });
  } catch {
    return `${host} does not resolve`;
  }
  const bad = addresses.find((a) => isPrivateAddress(a.address));
  return bad === undefined ? undefined : `${host} resolves to ${bad.address}, a loopback, private or link-local address`;
}

/** Error of a connect refused by the guard; its message is what the delivery's attempt shows. */
export class PrivateAddressError extends Error {
  readonly code = 'WEBHOOK_PRIVATE_ADDRESS';
}

/**
 * A `lookup` for http.request that resolves as usual and then fails the connect when any
 * address is private: the check runs on the addresses the socket is about to use.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 4);
    const list = addresses as LookupAddress[];
    const bad = list.find((a) => isPrivateAddress(a.address));
    if (bad) return callback(new PrivateAddressError(`refused: ${hostname} resolves to ${bad.address}, a private address`), '', 4);
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
    const first = list[0];
    if (!first) return callback(new Error(`${hostname} has no address`), '', 4);
    callback(null, first.address, first.family);
  });
};
