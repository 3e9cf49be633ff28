import { runLoad, type LoadGenerator, type LoadResult, type LoadSpec } from './loadgen.js';
import type { Sizes } from './options.js';
import { cpuTimes } from './proc.js';
import { matchedPairs, median, summarise, type Pair } from './stats.js';
import { TUNNEL_HOST, type BenchSystem } from './system.js';

/** W1 through the tunnel plus the CPU the edge and the agent spent on it. */
export interface TunnelLoad extends LoadResult {
  edgeCpuS: number;
  agentCpuS: number;
  /** Of those, seconds in the kernel (system calls: socket reads and writes), edge + agent. */
  kernelCpuS: number;
}

export interface SmallGetResult {
  pairs: Array<Pair<LoadResult | TunnelLoad>>;
  rps: { direct: number; tunnel: number; ratio: number };
  p50Ms: { direct: number; tunnel: number; ratio: number };
  p99Ms: { direct: number; tunnel: number; ratio: number };
  errors: { direct: number; tunnel: number };
  /** Median over tunnel runs of CPU microseconds per request. */
  cpuUsPerRequest: { edge: number; agent: number; total: number; kernel: number };
}

/** The load spec of one side of W1: the origin itself, or the edge with the tunnel's Host. */
export function smallGetSpec(system: BenchSystem, side: 'direct' | 'tunnel', sizes: Sizes, durationS: number): LoadSpec {
  return {
    port: side === 'direct' ? system.originPort : system.httpPort,
    path: '/small',
    host: TUNNEL_HOST,
    connections: sizes.connections,
    durationS,
  };
}

/** One tunnel run of W1 with edge and agent CPU read from /proc before and after. */
export async function tunnelLoad(
  system: BenchSystem,
  generator: LoadGenerator,
  spec: LoadSpec,
  agentPid: number | readonly number[] = system.agent.pid,
): Promise<TunnelLoad> {
  // Several agents (a pool's members): their CPU adds up.
  const agentTimes = (): { userS: number; systemS: number } => {
    const sum = { userS: 0, systemS: 0 };
    for (const pid of typeof agentPid === 'number' ? [agentPid] : agentPid) {
      const times = cpuTimes(pid);
      sum.userS += times.userS;
      sum.systemS += times.systemS;
    }
    return sum;
  };
  const edge0 = cpuTimes(system.server.pid);
  const agent0 = agentTimes();
  const result = await runLoad(generator, spec);
  const edge1 = cpuTimes(system.server.pid);
  const agent1 = agentTimes();
  return {
    ...result,
    edgeCpuS: edge1.userS + edge1.systemS - edge0.userS - edge0.systemS,
    agentCpuS: agent1.userS + agent1.systemS - agent0.userS - agent0.systemS,
    kernelCpuS: edge1.systemS - edge0.systemS + agent1.systemS - agent0.systemS,
  };
}

/**
 * W1: 100-byte GETs over `connections` keep-alive connections, direct and through the tunnel
 * in matched pairs, after an unrecorded warm-up of each side (JIT, pools, connections).
 */
export async function smallGet(
  system: BenchSystem,
  generator: LoadGenerator,
  sizes: Sizes,
  log: (line: string) => void,
): Promise<SmallGetResult> {
  if (sizes.w1WarmupS > 0) {
    await runLoad(generator, smallGetSpec(system, 'direct', sizes, sizes.w1WarmupS));
    await runLoad(generator, smallGetSpec(system, 'tunnel', sizes, sizes.w1WarmupS));
  }
  const pairs = await matchedPairs(sizes.w1Rounds, async (side) => {
    const spec = smallGetSpec(system, side, sizes, sizes.w1DurationS);
    const result = side === 'direct' ? await runLoad(generator, spec) : await tunnelLoad(system, generator, spec);
    log(
      `  W1 ${side.padEnd(6)} ${result.rps.toFixed(0)} req/s  p50 ${result.p50Ms.toFixed(2)} ms  p99 ${result.p99Ms.toFixed(2)} ms  errors ${result.errors}`,
    );
    return result;
  });
  const tunnelRuns = pairs.map((p) => p.tunnel as TunnelLoad);
  const perRequest = (cpu: (run: TunnelLoad) => number): number =>
    median(tunnelRuns.map((run) => (cpu(run) * 1e6) / Math.max(1, run.requests)));
  return {
    pairs,
    rps: summarise(pairs, (r) => r.rps),
    p50Ms: summarise(pairs, (r) => r.p50Ms),
    p99Ms: summarise(pairs, (r) => r.p99Ms),
    errors: { direct: pairs.reduce((s, p) => s + p.direct.errors, 0), tunnel: pairs.reduce((s, p) => s + p.tunnel.errors, 0) },
    cpuUsPerRequest: {
      edge: perRequest((run) => run.edgeCpuS),
      agent: perRequest((run) => run.agentCpuS),
      total: perRequest((run) => run.edgeCpuS + run.agentCpuS),
      kernel: perRequest((run) => run.kernelCpuS),
    },
  };
}
