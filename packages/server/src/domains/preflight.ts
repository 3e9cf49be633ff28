import { isIP } from 'node:net';
import { lookupWithDeadline } from './dns-resolver.js';

/** Where custom domains should point (SVC_EDGE_TARGET): a hostname for CNAME records and/or IPs for A records. */
export interface EdgeTarget {
  hostname?: string;
  ips?: readonly string[];
}

/** The part of `dns.promises.Resolver` the preflight uses. */
export interface PreflightResolver {
  resolveCname(hostname: string): Promise<string[]>;
  resolve4(hostname: string): Promise<string[]>;
}

/** What the host's DNS says today, and whether that reaches the edge. Informational: it never blocks anything. */
export interface PreflightResult {
  pointsAtEdge: boolean;
  found: { cname?: string[]; a?: string[] };
  expected: EdgeTarget;
}

/** What preflight needs. */
export interface PreflightOptions {
  host: string;
  target: EdgeTarget;
  resolver: PreflightResolver;
  /** Overall deadline; a lookup that misses it counts as nothing found. */
  timeoutMs: number;
}

/**
 * Parses SVC_EDGE_TARGET: a comma-separated list of at most one hostname and
 * any number of IPv4 addresses, e.g. `edge.example.net` or `203.0.113.7,edge.example.net`.
 * Returns undefined for an empty or malformed value.
 */
export function parseEdgeTarget(raw: string): EdgeTarget | undefined {
  const entries = raw
    .split(',')
    .map((s) => s.trim().toLowerCase().replace(/\.$/, ''))
    .filter((s) => s !== '');
  const ips = entries.filter((e) => isIP(e) === 4);
  const names = entries.filter((e) => isIP(e) === 0);
  if (entries.length === 0 || names.length > 1 || ips.length + names.length !== entries.length) return undefined;
  if (names[0] !== undefined && !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/.test(names[0])) return undefined;
  return { ...(names[0] === undefined ? {} : { hostname: names[0] }), ...(ips.length === 0 ? {} : { ips }) };
}

const canonical = (name: string): string => name.toLowerCase().replace(/\.$/, '');

/**
 * Resolves the host's CNAME and A records and reports whether they point at the
 * edge: a CNAME to the target hostname, or A records that are all edge IPs.
 * Without configured IPs, the target hostname's own A records stand in, so an
 * apex domain (which cannot have a CNAME) is still recognised.
 */
export async function preflight(options: PreflightOptions): Promise<PreflightResult> {
  const { host, target, resolver } = options;
  const deadline = Date.now() + options.timeoutMs;
  const [cname, a, targetA] = await Promise.all([
    lookupWithDeadline(() => resolver.resolveCname(host), deadline),
    lookupWithDeadline(() => resolver.resolve4(host), deadline),
    target.ips === undefined && target.hostname !== undefined
      ? lookupWithDeadline(() => resolver.resolve4(target.hostname ?? ''), deadline)
      : Promise.resolve(undefined),
  ]);
  const found: PreflightResult['found'] = {};
  if (cname.kind === 'found') found.cname = cname.records.map(canonical);
  if (a.kind === 'found') found.a = a.records;
  const edgeIps = new Set(target.ips ?? (targetA?.kind === 'found' ? targetA.records : []));
  const viaCname = target.hostname !== undefined && (found.cname ?? []).includes(canonical(target.hostname));
  const viaA = found.a !== undefined && found.a.length > 0 && found.a.every((ip) => edgeIps.has(ip));
  return { pointsAtEdge: viaCname || viaA, found, expected: target };
}
