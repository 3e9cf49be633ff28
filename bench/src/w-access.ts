import type { LoadGenerator, LoadSpec } from './loadgen.js';
import type { Sizes } from './options.js';
import type { Proc } from './proc.js';
import { compareSides, type AccessRuleResult } from './rule-pairs.js';
import { TUNNEL_HOST, type BenchSystem } from './system.js';

/** Tunnels of this workload: one behind basic auth, one behind an IP allow list. */
const AUTH_SUBDOMAIN = 'xauth';
const CIDR_SUBDOMAIN = 'xcidr';
/** A pool of two agents (`--pool`): the cost of picking a member per request. */
const POOL_SUBDOMAIN = 'xpool';
/** The pool's plain side: two tunnels without a pool (subdomains xpair1 and xpair2). */
const PAIR_SUBDOMAIN = 'xpair';
const USER = 'bench';
const PASSWORD = 'bench-password';

export type { AccessRuleResult };

export interface AccessResult {
  basicAuth: AccessRuleResult;
  cidrAllow: AccessRuleResult;
  /** A pool of two members against two tunnels without a pool, the load split between them (the "rule" side is the pool). */
  pool: AccessRuleResult;
}

/**
 * W1 through a tunnel with basic auth (every request signed in, as a browser does after its first
 * prompt), through one with an IP allow list the loopback visitor is on, and through a pool of
 * two, each in alternating pairs against tunnels without rules: what a rule costs the request path.
 */
export async function accessRules(
  system: BenchSystem,
  generator: LoadGenerator,
  sizes: Sizes,
  log: (line: string) => void,
): Promise<AccessResult> {
  const authAgent = await system.startAgent(AUTH_SUBDOMAIN, false, ['--basic-auth', `${USER}:${PASSWORD}`]);
  const cidrAgent = await system.startAgent(CIDR_SUBDOMAIN, false, ['--cidr-allow', '127.0.0.0/8', '--cidr-allow', '::1']);
  const authorization = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
  const basicAuth = await compare(system, generator, sizes, log, 'basic auth', authAgent, {
    host: `${AUTH_SUBDOMAIN}.localhost`,
    headers: { authorization },
  });
  const cidrAllow = await compare(system, generator, sizes, log, 'allow list', cidrAgent, { host: `${CIDR_SUBDOMAIN}.localhost` });
  const members = [await system.startAgent(POOL_SUBDOMAIN, false, ['--pool']), await system.startAgent(POOL_SUBDOMAIN, false, ['--pool'])];
  const pair = [await system.startAgent(`${PAIR_SUBDOMAIN}1`, false), await system.startAgent(`${PAIR_SUBDOMAIN}2`, false)];
  // Two agents as fresh as the members and two sessions on both sides: what differs is the pool's path alone.
  const twoTunnels = {
    loads: pair.map((_, i) => ({ host: `${PAIR_SUBDOMAIN}${i + 1}.localhost` })),
    agentPids: pair.map((agent) => agent.pid),
  };
  const poolHost = { host: `${POOL_SUBDOMAIN}.localhost` };
  const pooled = { loads: [poolHost, poolHost], agentPids: members.map((member) => member.pid) };
  const pool = await compareSides(system, generator, sizes, log, 'pool of 2', twoTunnels, pooled);
  return { basicAuth, cidrAllow, pool };
}

/**
 * W1 through `ruleAgent`'s tunnel against a tunnel without rules, in alternating pairs. The
 * plain side is an agent started now for the purpose, not the benchmark's own: that one has
 * served every workload before, while the rule's agent is fresh, and a fresh Node process keeps
 * compiling and growing its heap for a while, on background threads the CPU counts include:
 * against the warm agent, every rule looked several microseconds dearer than no rule.
 */
export async function compare(
  system: BenchSystem,
  generator: LoadGenerator,
  sizes: Sizes,
  log: (line: string) => void,
  name: string,
  ruleAgent: Proc,
  rule: Pick<LoadSpec, 'host' | 'headers'>,
): Promise<AccessRuleResult> {
  const subdomain = `${(rule.host ?? TUNNEL_HOST).split('.')[0]}plain`;
  const twin = await system.startAgent(subdomain, false);
  const plain = { loads: [{ host: `${subdomain}.localhost` }], agentPids: [twin.pid] };
  return compareSides(system, generator, sizes, log, name, plain, { loads: [rule], agentPids: [ruleAgent.pid] });
}
