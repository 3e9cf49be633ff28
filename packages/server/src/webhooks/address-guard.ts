import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup as lookupAll } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { ipv6Bytes } from './ipv6-bytes.js';

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
  // A zone ID scopes an address to one link of this machine: nothing public is spelled so.
  if (address.includes('%')) return true;
  const bytes = ipv6Bytes(address);
  if (!bytes) return true;
  return privateByEmbeddedIpv4(bytes) ?? BLOCKED.check(address, 'ipv6');
}

const zeros = (bytes: Uint8Array, from: number, to: number): boolean => bytes.subarray(from, to).every((b) => b === 0);
const privateIpv4At = (bytes: Uint8Array, at: number): boolean => BLOCKED.check(Array.from(bytes.subarray(at, at + 4)).join('.'), 'ipv4');

/**
 * Whether an IPv6 address is private by the IPv4 it carries, when its prefix is one that carries
 * an IPv4 (a connect to it ends at that IPv4 host through the kernel, a NAT64 gateway or a 6to4
 * relay); true for prefixes that are never a public receiver whatever they carry; undefined
 * when the prefix carries no IPv4.
 */
function privateByEmbeddedIpv4(bytes: Uint8Array): boolean | undefined {
  // ::/96, IPv4-compatible: deprecated, never routed publicly; it also holds :: and ::1.
  if (zeros(bytes, 0, 12)) return true;
  // ::ffff:0:0/96, IPv4-mapped: a dual-stack socket connects to the IPv4 itself.
  if (zeros(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return privateIpv4At(bytes, 12);
  const word = (i: number): number => (bytes[2 * i]! << 8) | bytes[2 * i + 1]!;
  if (word(0) === 0x64 && word(1) === 0xff9b) {
    // 64:ff9b::/96, the well-known NAT64 prefix: the gateway connects to the IPv4 in the last four bytes.
    if (zeros(bytes, 4, 12)) return privateIpv4At(bytes, 12);
    // 64:ff9b:1::/48, local-use NAT64: it translates into the operator's own network.
    if (word(2) === 1) return true;
  }
  // 2002::/16, 6to4: a relay delivers to the IPv4 that follows the prefix.
  if (word(0) === 0x2002) return privateIpv4At(bytes, 2);
  return undefined;
}

/** A receiver URL's host without the brackets of an IPv6 literal. */
export function urlHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** Why a receiver host may not be used: it is or resolves to a private address, or it does not resolve. */
export interface AddressProblem {
  kind: 'private' | 'unresolvable';
  /** A sentence naming the host. */
  reason: string;
}

/** Codes of a lookup whose answer is that the name has no address (as opposed to a failed lookup). */
const NO_SUCH_NAME = new Set(['ENOTFOUND', 'ENODATA', 'EAI_NONAME', 'EAI_NODATA']);

/** Why a receiver host may not be used, or undefined when every address it resolves to is public. */
export async function privateAddressProblem(host: string): Promise<AddressProblem | undefined> {
  if (isIP(host) !== 0)
    return isPrivateAddress(host) ? { kind: 'private', reason: `${host} is a loopback, private or link-local address` } : undefined;
  let addresses: LookupAddress[];
  try {
    addresses = await lookupAll(host, { all: true, verbatim: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unknown error';
    // A server that could not ask is not told the name is wrong: the lookup may work in a moment.
    const reason = NO_SUCH_NAME.has(code) ? `${host} does not resolve` : `${host} could not be resolved (${code}); try again`;
    return { kind: 'unresolvable', reason };
  }
  const bad = addresses.find((a) => isPrivateAddress(a.address));
  return bad === undefined
    ? undefined
    : { kind: 'private', reason: `${host} resolves to ${bad.address}, a loopback, private or link-local address` };
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
