import { runLoad, type LoadGenerator, type LoadSpec } from './loadgen.js';
import type { Sizes } from './options.js';
import type { Proc } from './proc.js';
import { matchedPairs, median, summarise } from './stats.js';
import { smallGetSpec, tunnelLoad, type TunnelLoad } from './w-small-get.js';
import type { BenchSystem } from './system.js';

/** Tunnels of this workload: one behind basic auth, one behind an IP allow list. */
const AUTH_SUBDOMAIN = 'xauth';
const CIDR_SUBDOMAIN = 'xcidr';
/** A pool of two agents (`--pool`): the cost of picking a member per request. */
const POOL_SUBDOMAIN = 'xpool';
const USER = 'bench';
const PASSWORD = 'bench-password';

/** W1 through a tunnel with one access rule against the tunnel without rules, in the same pairs. */
export interface AccessRuleResult {
  rps: { plain: number; rule: number; ratio: number };
  /** Median CPU microseconds per request, edge + agent, for each. */
  cpuUsPerRequest: { plain: number; rule: number };
}

export interface AccessResult {
  basicAuth: AccessRuleResult;
  cidrAllow: AccessRuleResult;
  /** A pool of two members against one tunnel (the "rule" side is the pool). */
  pool: AccessRuleResult;
}

/**
 * W1 through a tunnel with basic auth (every request signed in, as a browser does after its first
 * prompt) and through one with an IP allow list the loopback visitor is on, each in matched
 * pairs against the tunnel without rules: what a rule costs the request path.
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
  const pool = await compare(system, generator, sizes, log, 'pool of 2', members, { host: `${POOL_SUBDOMAIN}.localhost` });
  return { basicAuth, cidrAllow, pool };
}

/** W1 through `ruleAgent`'s tunnel against the tunnel without rules, in matched pairs. */
export async function compare(
  system: BenchSystem,
  generator: LoadGenerator,
  sizes: Sizes,
  log: (line: string) => void,
  name: string,
  ruleAgent: Proc | Proc[],
  rule: Pick<LoadSpec, 'host' | 'headers'>,
): Promise<AccessRuleResult> {
  // 'direct' is the tunnel without rules here, 'tunnel' the one with the rule.
  const spec = (side: 'direct' | 'tunnel', durationS: number): LoadSpec => ({
    ...smallGetSpec(system, 'tunnel', sizes, durationS),
    ...(side === 'tunnel' ? rule : {}),
  });
  if (sizes.w1WarmupS > 0) await runLoad(generator, spec('tunnel', sizes.w1WarmupS));
  const pairs = await matchedPairs<TunnelLoad>(sizes.w1Rounds, async (side) => {
    const run = await tunnelLoad(
      system,
      generator,
      spec(side, sizes.w1DurationS),
      side === 'tunnel' ? [ruleAgent].flat().map((agent) => agent.pid) : system.agent.pid,
    );
    log(
      `  W1 ${(side === 'tunnel' ? name : 'no rules').padEnd(10)} ${run.rps.toFixed(0)} req/s  p99 ${run.p99Ms.toFixed(2)} ms  errors ${run.errors}`,
    );
    if (run.errors > 0) throw new Error(`W1 with ${name}: ${run.errors} requests failed (a rule refused the benchmark's visitor?)`);
    return run;
  });
  const perRequest = (runs: TunnelLoad[]): number => median(runs.map((r) => ((r.edgeCpuS + r.agentCpuS) * 1e6) / Math.max(1, r.requests)));
  const rps = summarise(pairs, (r) => r.rps);
  return {
    rps: { plain: rps.direct, rule: rps.tunnel, ratio: rps.ratio },
    cpuUsPerRequest: { plain: perRequest(pairs.map((p) => p.direct)), rule: perRequest(pairs.map((p) => p.tunnel)) },
  };
}
