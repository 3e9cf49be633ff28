import type { ClusterSystem } from './cluster-system.js';
import { runLoad, type LoadGenerator, type LoadResult } from './loadgen.js';
import type { Sizes } from './options.js';
import { cpuSeconds } from './proc.js';
import { alternatingPairs, median, summarise } from './stats.js';
import { TUNNEL_HOST } from './system.js';

/** One small-GET run entering one node, with the CPU each process spent on it. */
interface ClusterRun extends LoadResult {
  holderCpuS: number;
  entryCpuS: number;
  agentCpuS: number;
}

export interface ClusterResult {
  /** Small GET entering the node that holds the agent's session, and entering the other node. */
  rps: { holder: number; entry: number; ratio: number };
  p99Ms: { holder: number; entry: number };
  errors: { holder: number; entry: number };
  /** Median CPU µs per request of both nodes and the agent, for each way in. */
  cpuUsPerRequest: { holder: number; entry: number; extra: number };
  /** Median CPU µs per request of the holding node alone when visitors enter it: the edge's own cost. */
  edgeOwnUsPerRequest: number;
}

/**
 * The cost of the extra hop: W1 entering the holder (visitor → holder → agent) and entering
 * the other node (visitor → entry → peer link → holder → agent), in alternating matched pairs
 * after a warm-up of each way. CPU is read from /proc for both nodes and the agent, so the
 * extra is everything the second node and the peer link add.
 */
export async function clusterHop(
  system: ClusterSystem,
  generator: LoadGenerator,
  sizes: Sizes,
  log: (line: string) => void,
): Promise<ClusterResult> {
  const spec = (port: number, durationS: number) => ({
    port,
    path: '/small',
    host: TUNNEL_HOST,
    connections: sizes.connections,
    durationS,
  });
  if (sizes.w1WarmupS > 0) {
    await runLoad(generator, spec(system.holder.httpPort, sizes.w1WarmupS));
    await runLoad(generator, spec(system.entry.httpPort, sizes.w1WarmupS));
  }
  const pids = [system.holder.proc.pid, system.entry.proc.pid, system.agent.pid];
  const rounds = Math.max(2, sizes.w1Rounds + (sizes.w1Rounds % 2));
  // 'direct' is entering the holder here, 'tunnel' entering the other node.
  const pairs = await alternatingPairs<ClusterRun>(rounds, async (side) => {
    const before = pids.map(cpuSeconds);
    const result = await runLoad(generator, spec(side === 'direct' ? system.holder.httpPort : system.entry.httpPort, sizes.w1DurationS));
    const [holderCpuS, entryCpuS, agentCpuS] = pids.map((pid, i) => cpuSeconds(pid) - before[i]!) as [number, number, number];
    const perRequest = ((holderCpuS + entryCpuS + agentCpuS) * 1e6) / Math.max(1, result.requests);
    log(
      `  entering ${side === 'direct' ? 'the holder   ' : 'the other node'} ${result.rps.toFixed(0)} req/s  p99 ${result.p99Ms.toFixed(2)} ms  errors ${result.errors}  CPU ${perRequest.toFixed(1)} µs/req`,
    );
    return { ...result, holderCpuS, entryCpuS, agentCpuS };
  });
  const perRequest = (run: ClusterRun): number => ((run.holderCpuS + run.entryCpuS + run.agentCpuS) * 1e6) / Math.max(1, run.requests);
  const rps = summarise(pairs, (run) => run.rps);
  const holderCpu = median(pairs.map((pair) => perRequest(pair.direct)));
  const entryCpu = median(pairs.map((pair) => perRequest(pair.tunnel)));
  return {
    rps: { holder: rps.direct, entry: rps.tunnel, ratio: rps.ratio },
    p99Ms: { holder: median(pairs.map((p) => p.direct.p99Ms)), entry: median(pairs.map((p) => p.tunnel.p99Ms)) },
    errors: {
      holder: pairs.reduce((sum, p) => sum + p.direct.errors, 0),
      entry: pairs.reduce((sum, p) => sum + p.tunnel.errors, 0),
    },
    cpuUsPerRequest: { holder: holderCpu, entry: entryCpu, extra: median(pairs.map((p) => perRequest(p.tunnel) - perRequest(p.direct))) },
    edgeOwnUsPerRequest: median(pairs.map((p) => (p.direct.holderCpuS * 1e6) / Math.max(1, p.direct.requests))),
  };
}

/** The cluster table: the figures, and whether the hop costs no more than the edge's own work. */
export function clusterMarkdown(result: ClusterResult): string {
  const f = (value: number): string => value.toFixed(1);
  const met = result.cpuUsPerRequest.extra <= result.edgeOwnUsPerRequest;
  return [
    '| Small GET (100 B, 50 conns) | entering the holder | entering another node | ratio / difference | goal | met |',
    '|---|---:|---:|---:|---|---|',
    `| req/s | ${result.rps.holder.toFixed(0)} | ${result.rps.entry.toFixed(0)} | ${result.rps.ratio.toFixed(2)}× | — |  |`,
    `| p99, ms | ${result.p99Ms.holder.toFixed(2)} | ${result.p99Ms.entry.toFixed(2)} | — | — |  |`,
    `| errors | ${result.errors.holder} | ${result.errors.entry} | — | — |  |`,
    `| CPU per request, both nodes + agent, µs | ${f(result.cpuUsPerRequest.holder)} | ${f(result.cpuUsPerRequest.entry)} | ${result.cpuUsPerRequest.extra >= 0 ? '+' : ''}${f(result.cpuUsPerRequest.extra)} | extra ≤ the edge's own (${f(result.edgeOwnUsPerRequest)}) | ${met ? 'yes' : '**no**'} |`,
  ].join('\n');
}
