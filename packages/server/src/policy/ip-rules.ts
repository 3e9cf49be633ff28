import { BlockList, isIP } from 'node:net';

/** Addresses whose verdict is remembered per policy; past it the memo starts over. */
const MAX_REMEMBERED = 10_000;

/**
 * The IP rules of one tunnel: deny wins over allow, and with an allow list every address not on
 * it is denied. Matching goes through node:net's BlockList (IPv4-mapped IPv6 addresses match
 * their IPv4 rules); verdicts are remembered per address string, so a visitor's second request
 * costs one map lookup rather than a parse.
 */
export class IpRules {
  private readonly allow: BlockList | undefined;
  private readonly deny: BlockList | undefined;
  private readonly verdicts = new Map<string, boolean>();

  constructor(cidrAllow: readonly string[] | undefined, cidrDeny: readonly string[] | undefined) {
    this.allow = cidrAllow && cidrAllow.length > 0 ? blockList(cidrAllow) : undefined;
    this.deny = cidrDeny && cidrDeny.length > 0 ? blockList(cidrDeny) : undefined;
  }

  /** Whether a visitor at `ip` (the socket's peer, or its PROXY-protocol address) may pass. */
  admits(ip: string): boolean {
    const known = this.verdicts.get(ip);
    if (known !== undefined) return known;
    const verdict = this.decide(ip);
    if (this.verdicts.size >= MAX_REMEMBERED) this.verdicts.clear();
    this.verdicts.set(ip, verdict);
    return verdict;
  }

  private decide(ip: string): boolean {
    const address = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
    const family = isIP(address);
    // An address that is none (a Unix socket in tests) matches no rule: only an allow list refuses it.
    if (family === 0) return this.allow === undefined;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (this.deny?.check(address, type)) return false;
    return this.allow === undefined || this.allow.check(address, type);
  }
}

/** A BlockList of checked CIDRs or single addresses (policyProblem already refused bad ones). */
function blockList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const slash = cidr.indexOf('/');
    const address = slash < 0 ? cidr : cidr.slice(0, slash);
    const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (slash < 0) list.addAddress(address, type);
    else list.addSubnet(address, Number(cidr.slice(slash + 1)), type);
  }
  return list;
}
