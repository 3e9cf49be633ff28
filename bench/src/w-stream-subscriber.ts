import os from 'node:os';
import path from 'node:path';
import { ipcClient } from './ipc.js';
import { runLoad, type LoadGenerator } from './loadgen.js';
import type { Sizes } from './options.js';
import { BENCH_DIST, cpuSeconds, spawnNode, type Proc } from './proc.js';
import { alternatingPairs, geometricMean, median, summarise } from './stats.js';
import type { BenchSystem } from './system.js';
import { smallGetSpec, tunnelLoad, type TunnelLoad } from './w-small-get.js';

export interface StreamSubscriberResult {
  /** Small GET through the tunnel without and with one live-stream subscriber attached. */
  rps: { without: number; with: number; ratio: number };
  /** Each pair's req/s with the subscriber over without, in the order they ran. */
  pairRatios: number[];
  /** The geometric mean of pairRatios and its 95% interval. */
  ratioMean: { mean: number; low: number; high: number };
  /** Median CPU microseconds per request of the edge process alone, for each: the cost the goal is about. */
  edgeCpuUsPerRequest: { without: number; with: number };
  /** Median CPU microseconds per request, edge + agent, for each. */
  cpuUsPerRequest: { without: number; with: number };
  /** Median CPU microseconds per request of the subscriber process itself (it shares the machine's cores). */
  subscriberCpuUsPerRequest: number;
  /**
   * Over the runs with the subscriber: request events it received, and records it missed (told
   * of in `dropped` events, or still not arrived once the run was over).
   */
  events: number;
  dropped: number;
}

/** A tunnel run, plus the subscriber process's CPU seconds over it (0 without one). */
interface StreamRun extends TunnelLoad {
  subscriberCpuS: number;
}

/** The nice value of the subscriber process. */
const LOWEST_PRIORITY = 19;

/** One open GET /v1/requests/stream in its own process (stream-subscriber-main.ts). */
export interface Subscriber {
  proc: Proc;
  call: (cmd: string, args?: Record<string, unknown>) => Promise<unknown>;
}

/** Starts the subscriber process and opens the stream; resolves once the server has subscribed it. */
export async function subscribe(system: BenchSystem): Promise<Subscriber> {
  const proc = spawnNode(path.join(BENCH_DIST, 'stream-subscriber-main.js'), [String(system.httpPort), system.token], {
    label: 'stream-subscriber',
    ipc: true,
  });
  // The reader stands for a dashboard, which runs on another machine: at the lowest priority
  // it takes the cores only when the processes under test leave them, instead of waking up in
  // front of them. It still has to take every record (the counts say whether it did).
  os.setPriority(proc.pid, LOWEST_PRIORITY);
  const call = ipcClient(proc.child);
  try {
    await call('open');
  } catch (error) {
    await proc.stop('SIGKILL');
    throw error;
  }
  return { proc, call };
}

/**
 * W1 through the tunnel in matched pairs, without and with one subscriber of
 * GET /v1/requests/stream attached (an open dashboard's live Traffic table). The inspector
 * publishes every captured request to it, so the difference is what following the traffic
 * live costs the tunnel. The subscriber runs in its own process: its CPU is read apart from
 * the edge's, though on a small machine it still takes cores the load generator, edge and
 * agent would otherwise use, which the throughput ratio includes.
 */
export async function streamSubscriber(
  system: BenchSystem,
  generator: LoadGenerator,
  sizes: Sizes,
  log: (line: string) => void,
): Promise<StreamSubscriberResult> {
  const spec = smallGetSpec(system, 'tunnel', sizes, sizes.w1DurationS);
  if (sizes.w1WarmupS > 0) {
    // The edge's stream path warms up too (JIT), not only the proxy path.
    const warm = await subscribe(system);
    await runLoad(generator, { ...spec, durationS: sizes.w1WarmupS });
    await warm.proc.stop('SIGTERM');
  }
  let events = 0;
  let dropped = 0;
  // 'direct' is the run without a subscriber here, 'tunnel' the run with one. An even number
  // of pairs in alternating order: whichever run comes second in a pair meets a store and heap
  // grown by the first, and that must not count against one side only.
  const rounds = Math.max(2, sizes.w1Rounds + (sizes.w1Rounds % 2));
  const pairs = await alternatingPairs<StreamRun>(rounds, async (side) => {
    const subscriber = side === 'tunnel' ? await subscribe(system) : undefined;
    try {
      const cpu0 = subscriber ? cpuSeconds(subscriber.proc.pid) : 0;
      const run = await tunnelLoad(system, generator, spec);
      // Read after the catch-up: at the lowest priority, part of the reading comes after the load.
      const counts = subscriber ? await caughtUp(subscriber.call, run.requests) : { events: 0, dropped: 0 };
      const subscriberCpuS = subscriber ? cpuSeconds(subscriber.proc.pid) - cpu0 : 0;
      const edgeUs = (run.edgeCpuS * 1e6) / Math.max(1, run.requests);
      log(
        `  W1 ${subscriber ? 'with stream subscriber   ' : 'without stream subscriber'} ${run.rps.toFixed(0)} req/s  p99 ${run.p99Ms.toFixed(2)} ms  errors ${run.errors}  edge ${edgeUs.toFixed(1)} µs/req` +
          (subscriber ? `  subscriber ${((subscriberCpuS * 1e6) / Math.max(1, run.requests)).toFixed(1)} µs/req` : ''),
      );
      events += counts.events;
      dropped += counts.dropped;
      return { ...run, subscriberCpuS };
    } finally {
      if (subscriber) {
        await subscriber.call('close');
        await subscriber.proc.stop('SIGTERM');
      }
    }
  });
  const perRequest = (runs: StreamRun[], cpu: (r: StreamRun) => number): number =>
    median(runs.map((r) => (cpu(r) * 1e6) / Math.max(1, r.requests)));
  const without = pairs.map((p) => p.direct);
  const withRuns = pairs.map((p) => p.tunnel);
  const rps = summarise(pairs, (r) => r.rps);
  const pairRatios = pairs.map((p) => p.tunnel.rps / p.direct.rps);
  log(`  the subscriber received ${events} records and missed ${dropped} (told of, or never arrived)`);
  return {
    rps: { without: rps.direct, with: rps.tunnel, ratio: rps.ratio },
    pairRatios,
    ratioMean: geometricMean(pairRatios),
    edgeCpuUsPerRequest: { without: perRequest(without, (r) => r.edgeCpuS), with: perRequest(withRuns, (r) => r.edgeCpuS) },
    cpuUsPerRequest: {
      without: perRequest(without, (r) => r.edgeCpuS + r.agentCpuS),
      with: perRequest(withRuns, (r) => r.edgeCpuS + r.agentCpuS),
    },
    subscriberCpuUsPerRequest: perRequest(withRuns, (r) => r.subscriberCpuS),
    events,
    dropped,
  };
}

/** How long the subscriber may take, after a run, to receive the run's last records. */
const CATCH_UP_MS = 5000;
const CATCH_UP_POLL_MS = 20;

/**
 * The subscriber's counts once it has as many records as the run made requests, or when
 * CATCH_UP_MS is over; records that have not arrived by then count as missed. The inspector
 * publishes a batch a few milliseconds after its requests, and a reader at the lowest priority
 * may be further behind: it has to catch up, or the run did not carry every record to it.
 */
async function caughtUp(call: Subscriber['call'], requests: number): Promise<{ events: number; dropped: number }> {
  const deadline = performance.now() + CATCH_UP_MS;
  for (;;) {
    const counts = (await call('counts')) as { events: number; dropped: number };
    if (counts.events + counts.dropped >= requests) return counts;
    if (performance.now() > deadline) return { events: counts.events, dropped: requests - counts.events };
    await new Promise((resolve) => setTimeout(resolve, CATCH_UP_POLL_MS));
  }
}

/** The report of --stream: the pairs' ratios, their geometric mean and what each side cost. */
export function streamMarkdown(result: StreamSubscriberResult, command: string): string {
  const n = result.pairRatios.length;
  const { mean, low, high } = result.ratioMean;
  const interval = Number.isNaN(low) ? 'no interval from one pair' : `95% interval ${low.toFixed(3)}–${high.toFixed(3)}`;
  return [
    '## Small GET without and with one live request-stream subscriber',
    '',
    `- Command: \`${command}\``,
    `- ${n} alternating pairs; goal: with/without ≥ 0.95 and no record missed.`,
    `- With/without, geometric mean of the pairs: **${mean.toFixed(3)}** (${interval}); median of the pairs ${median(result.pairRatios).toFixed(3)}.`,
    `- Each pair, in order: ${result.pairRatios.map((r) => r.toFixed(3)).join(', ')}.`,
    '',
    '| | without | with |',
    '|---|---:|---:|',
    `| req/s, median | ${result.rps.without.toFixed(0)} | ${result.rps.with.toFixed(0)} |`,
    `| edge CPU per request, µs | ${result.edgeCpuUsPerRequest.without.toFixed(1)} | ${result.edgeCpuUsPerRequest.with.toFixed(1)} |`,
    `| edge + agent CPU per request, µs | ${result.cpuUsPerRequest.without.toFixed(1)} | ${result.cpuUsPerRequest.with.toFixed(1)} |`,
    `| the subscriber's CPU per request, µs | — | ${result.subscriberCpuUsPerRequest.toFixed(2)} |`,
    `| records received / missed | — | ${result.events} / ${result.dropped} |`,
  ].join('\n');
}
