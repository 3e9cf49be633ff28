import { readdirSync, readFileSync } from 'node:fs';
import { runLoad, type LoadGenerator, type LoadResult, type LoadSpec } from './loadgen.js';
import type { Sizes } from './options.js';
import { alternatingPairs, median, medianInterval, summarise } from './stats.js';
import { smallGetSpec } from './w-small-get.js';
import type { BenchSystem } from './system.js';

/**
 * One side of a rule row: the loads that run at once, the connections split evenly between them,
 * and the agents whose CPU counts. A pool of two is measured against two tunnels without a pool,
 * each taking half the connections: both sides then run two agent processes and two sessions,
 * and the difference is what the pool itself costs, not what a second process costs.
 */
export interface RuleSide {
  loads: ReadonlyArray<Pick<LoadSpec, 'host' | 'headers'>>;
  agentPids: readonly number[];
}

/** W1 through a tunnel with a rule against the tunnel without rules, in the same pairs. */
export interface AccessRuleResult {
  rps: { plain: number; rule: number; ratio: number };
  /**
   * Median CPU microseconds per request, edge + agents, for each side, and the median of each
   * pair's difference (rule minus plain): the rule's cost, read from pairs run back to back.
   */
  cpuUsPerRequest: { plain: number; rule: number; extra: number };
  /** An interval of at least 95% for `extra` (stats.ts medianInterval): what the pairs can tell apart. */
  extraInterval: { low: number; high: number };
  /** The same difference for the edge's threads alone and for the agents' alone (their medians need not add up to `extra`). */
  extraUsPerRequest: { edge: number; agents: number };
}

/** One run of a side: the load's figures, and the CPU the edge and the agents spent meanwhile. */
export interface RuleRun extends LoadResult {
  /** Edge + agents, seconds on a CPU, every thread. */
  cpuS: number;
  /** Of which the edge's threads. */
  edgeCpuS: number;
}

/**
 * Seconds on a CPU of every thread of these processes, from /proc/<pid>/task/<tid>/schedstat,
 * counted in nanoseconds: /proc/<pid>/stat counts in clock ticks (10 ms), which on a run of a
 * second or two is an error of several microseconds per request, the size of what these rows
 * look for. A thread that ends between two readings takes its time with it; the edge's and the
 * agent's threads live as long as their processes.
 */
export function threadCpuS(pids: readonly number[]): number {
  let ns = 0;
  for (const pid of pids) {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // The thread ended after the listing.
      }
    }
  }
  return ns / 1e9;
}

/** One run of a side: its loads at once for `durationS`, with the edge's and the agents' CPU over it. */
export async function sideLoad(
  system: BenchSystem,
  generator: LoadGenerator,
  sizes: Sizes,
  side: RuleSide,
  durationS: number,
): Promise<RuleRun> {
  const connections = Math.max(1, Math.floor(sizes.connections / side.loads.length));
  const specs = side.loads.map((load) => ({ ...smallGetSpec(system, 'tunnel', sizes, durationS), ...load, connections }));
  const edgeBefore = threadCpuS([system.server.pid]);
  const agentsBefore = threadCpuS(side.agentPids);
  const results = await Promise.all(specs.map((spec) => runLoad(generator, spec)));
  const edgeCpuS = threadCpuS([system.server.pid]) - edgeBefore;
  const cpuS = edgeCpuS + threadCpuS(side.agentPids) - agentsBefore;
  return {
    requests: results.reduce((sum, r) => sum + r.requests, 0),
    durationS: Math.max(...results.map((r) => r.durationS)),
    rps: results.reduce((sum, r) => sum + r.rps, 0),
    // Latencies of concurrent loads do not merge; the worse of them is kept.
    p50Ms: Math.max(...results.map((r) => r.p50Ms)),
    p99Ms: Math.max(...results.map((r) => r.p99Ms)),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
    cpuS,
    edgeCpuS,
  };
}

/**
 * W1 through the rule's side against the plain side, in `sizes.ruleRounds` pairs whose order
 * alternates, so that a drift of the machine's load within a pair favours neither side. Each
 * side is warmed up first (a fresh agent's JIT).
 */
export async function compareSides(
  system: BenchSystem,
  generator: LoadGenerator,
  sizes: Sizes,
  log: (line: string) => void,
  name: string,
  plain: RuleSide,
  rule: RuleSide,
): Promise<AccessRuleResult> {
  if (sizes.w1WarmupS > 0) {
    await sideLoad(system, generator, sizes, plain, sizes.w1WarmupS);
    await sideLoad(system, generator, sizes, rule, sizes.w1WarmupS);
  }
  const pairs = await alternatingPairs<RuleRun>(sizes.ruleRounds, async (which) => {
    const run = await sideLoad(system, generator, sizes, which === 'tunnel' ? rule : plain, sizes.ruleDurationS);
    log(
      `  W1 ${(which === 'tunnel' ? name : 'no rules').padEnd(10)} ${run.rps.toFixed(0)} req/s  ${usPerRequest(run).toFixed(1)} µs CPU/req (edge ${edgeUsPerRequest(run).toFixed(1)})  p99 ${run.p99Ms.toFixed(2)} ms  errors ${run.errors}`,
    );
    if (run.errors > 0) throw new Error(`W1 with ${name}: ${run.errors} requests failed (a rule refused the benchmark's visitor?)`);
    return run;
  });
  const rps = summarise(pairs, (r) => r.rps);
  /** Each pair's difference, rule minus plain, of one figure per request. */
  const differences = (perRequest: (run: RuleRun) => number): number[] => pairs.map((p) => perRequest(p.tunnel) - perRequest(p.direct));
  const extras = differences(usPerRequest);
  return {
    rps: { plain: rps.direct, rule: rps.tunnel, ratio: rps.ratio },
    cpuUsPerRequest: {
      plain: median(pairs.map((p) => usPerRequest(p.direct))),
      rule: median(pairs.map((p) => usPerRequest(p.tunnel))),
      extra: middle(extras),
    },
    extraInterval: medianInterval(extras),
    extraUsPerRequest: { edge: middle(differences(edgeUsPerRequest)), agents: middle(differences(agentsUsPerRequest)) },
  };
}

/** Edge + agent CPU microseconds per request of one run. */
function usPerRequest(run: RuleRun): number {
  return (run.cpuS * 1e6) / Math.max(1, run.requests);
}

function edgeUsPerRequest(run: RuleRun): number {
  return (run.edgeCpuS * 1e6) / Math.max(1, run.requests);
}

function agentsUsPerRequest(run: RuleRun): number {
  return ((run.cpuS - run.edgeCpuS) * 1e6) / Math.max(1, run.requests);
}

/** The median, of an even count the mean of the two middle values (the pairs come in even numbers). */
function middle(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[half]! : (sorted[half - 1]! + sorted[half]!) / 2;
}
