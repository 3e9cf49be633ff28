import path from 'node:path';
import { runLoad, type LoadGenerator, type LoadSpec } from './loadgen.js';
import { machineSeconds } from './machine-load.js';
import type { Sizes } from './options.js';
import { BENCH_DIST, cpuSeconds, spawnNode, type Proc } from './proc.js';
import { median } from './stats.js';
import type { BenchSystem } from './system.js';
import { smallGetSpec } from './w-small-get.js';

/**
 * One side of `--floor`: the origin itself, a bare relay chain (with stand-in work per request,
 * or none) or svcRouter. `key` names it in the JSON: direct, tunnel, floor, floor+<µs>.
 */
export interface FloorSide {
  key: string;
  label: string;
  port: number;
  /** The two processes between visitor and origin, whose CPU is read; none for direct. */
  relayPids: readonly [number, number] | null;
}

/** One small-GET run of one side, with the machine's idle share and the two relay processes' CPU. */
export interface FloorRun {
  rps: number;
  p99Ms: number;
  errors: number;
  /** CPU of the two processes between visitor and origin (none for direct), µs per request. */
  relayCpuUs: { edge: number; agent: number } | null;
  /** Share of both cores that was idle during the run, percent. */
  idlePercent: number;
}

export interface FloorSideSummary {
  key: string;
  label: string;
  /** Medians over the rounds; the ratio is the median of each round's ratio to its direct run. */
  rps: number;
  ratio: number;
  p99Ms: number;
  idlePercent: number;
  /** Edge + agent (or the floor's two processes), µs per request; NaN for direct. */
  cpuUsPerRequest: number;
}

export interface FloorResult {
  /** Per round, each side's run by key. */
  rounds: Array<Record<string, FloorRun>>;
  /** In the order run: direct, svcRouter (key tunnel), floor, floor-http, each floor with added work. */
  sides: FloorSideSummary[];
  /** svcRouter's req/s over the bare floor's, median of the rounds. */
  tunnelToFloor: number;
}

/** Seconds of the unrecorded run before each measured one. */
const REWARM_S = 2;

/** The two floor processes, the edge's visitor port, and their stop. */
interface FloorRelay {
  visitorPort: number;
  pids: readonly [number, number];
  close(): Promise<void>;
}

async function startFloorRelay(originPort: number, busyUs: number, http: boolean): Promise<FloorRelay> {
  const script = path.join(BENCH_DIST, 'floor-relay.js');
  const busy = ['--busy-us', String(busyUs)];
  const edge = spawnNode(script, ['edge', ...busy, ...(http ? ['--http'] : [])], { label: 'floor edge' });
  const procs: Proc[] = [edge];
  try {
    const [, sessionPort, visitorPort] = await edge.waitForLine(/^floor edge session (\d+) visitors (\d+)$/);
    const agent = spawnNode(script, ['agent', sessionPort!, String(originPort), ...busy], { label: 'floor agent' });
    procs.push(agent);
    await agent.waitForLine(/^floor agent connected$/);
    return { visitorPort: Number(visitorPort), pids: [edge.pid, agent.pid], close: () => stopAll(procs) };
  } catch (error) {
    await stopAll(procs);
    throw error;
  }
}

async function stopAll(procs: readonly Proc[]): Promise<void> {
  await Promise.all(procs.map((proc) => proc.stop()));
}

async function measuredRun(generator: LoadGenerator, spec: LoadSpec, pids: readonly number[] | null): Promise<FloorRun> {
  const machine0 = machineSeconds();
  const cpu0 = pids?.map(cpuSeconds);
  const result = await runLoad(generator, spec);
  const cpu1 = pids?.map(cpuSeconds);
  const machine1 = machineSeconds();
  const idleS = machine1.idleS - machine0.idleS;
  const totalS = idleS + machine1.busyS - machine0.busyS;
  const perRequestUs = (i: number): number => ((cpu1![i]! - cpu0![i]!) * 1e6) / Math.max(1, result.requests);
  return {
    rps: result.rps,
    p99Ms: result.p99Ms,
    errors: result.errors,
    relayCpuUs: pids ? { edge: perRequestUs(0), agent: perRequestUs(1) } : null,
    idlePercent: totalS > 0 ? (100 * idleS) / totalS : Number.NaN,
  };
}

/**
 * W1 in interleaved rounds (direct, svcRouter, floor, floor with added work…): what this machine
 * allows a visitor → edge → session → agent → origin chain that does no work of its own, how
 * its throughput falls as work per request is added, and svcRouter next to them. Shows how
 * much of the gap to direct is the chain's shape (four processes on the cores, four loopback
 * sockets per request) and how much is the relays' CPU per request.
 */
export async function floorComparison(
  system: BenchSystem,
  generator: LoadGenerator,
  sizes: Sizes,
  addedBusyUs: readonly number[],
  log: (line: string) => void,
): Promise<FloorResult> {
  const relays: FloorRelay[] = [];
  try {
    // svcRouter right after direct, as in the full benchmark's pairs.
    const sides: FloorSide[] = [
      { key: 'direct', label: 'direct to origin', port: system.originPort, relayPids: null },
      { key: 'tunnel', label: 'svcRouter', port: system.httpPort, relayPids: [system.server.pid, system.agent.pid] },
    ];
    const floors = [
      { key: 'floor', label: 'bare relay floor', busyUs: 0, http: false },
      { key: 'floor-http', label: 'floor with HTTP/1.1 on the edge, bytes only on the agent', busyUs: 0, http: true },
      ...addedBusyUs.map((busyUs) => ({
        key: `floor+${busyUs}`,
        label: `floor + ${busyUs} µs busy per request in each process`,
        busyUs,
        http: false,
      })),
    ];
    for (const { key, label, busyUs, http } of floors) {
      const relay = await startFloorRelay(system.originPort, busyUs, http);
      relays.push(relay);
      sides.push({ key, label, port: relay.visitorPort, relayPids: relay.pids });
    }
    const spec = (side: FloorSide, durationS: number): LoadSpec => ({
      ...smallGetSpec(system, 'tunnel', sizes, durationS),
      port: side.port,
    });

    if (sizes.w1WarmupS > 0) for (const side of sides) await runLoad(generator, spec(side, sizes.w1WarmupS));
    const rounds: FloorResult['rounds'] = [];
    for (let round = 0; round < sizes.w1Rounds; round++) {
      const runs: Record<string, FloorRun> = {};
      for (const side of sides) {
        // Each measured run follows a short unrecorded one of the same side: a side idle while
        // the others ran (~30-40 s) is slower for its first seconds (svcRouter's edge measured
        // 26-29 µs per request in the 8 s after 30 s idle, against 22 under steady load). Two
        // seconds do not undo all of it for svcRouter: see
        // docs/performance.md#idtable-and-map-churn-after-a-full-gc.
        if (sizes.w1WarmupS > 0) await runLoad(generator, spec(side, Math.min(REWARM_S, sizes.w1WarmupS)));
        const run = await measuredRun(generator, spec(side, sizes.w1DurationS), side.relayPids);
        const cpu = run.relayCpuUs ? `  edge ${run.relayCpuUs.edge.toFixed(1)} + agent ${run.relayCpuUs.agent.toFixed(1)} µs/req` : '';
        log(
          `  ${side.key.padEnd(9)} ${run.rps.toFixed(0)} req/s  p99 ${run.p99Ms.toFixed(2)} ms  idle ${run.idlePercent.toFixed(1)}%${cpu}  errors ${run.errors}`,
        );
        runs[side.key] = run;
      }
      rounds.push(runs);
    }
    return summariseFloor(sides, rounds);
  } finally {
    await Promise.all(relays.map((relay) => relay.close()));
  }
}

function summariseFloor(sides: readonly FloorSide[], rounds: FloorResult['rounds']): FloorResult {
  const over = (field: (round: Record<string, FloorRun>) => number): number => median(rounds.map(field));
  return {
    rounds,
    sides: sides.map(({ key, label }) => ({
      key,
      label,
      rps: over((r) => r[key]!.rps),
      ratio: over((r) => r[key]!.rps / r.direct!.rps),
      p99Ms: over((r) => r[key]!.p99Ms),
      idlePercent: over((r) => r[key]!.idlePercent),
      cpuUsPerRequest: over((r) => {
        const cpu = r[key]!.relayCpuUs;
        return cpu ? cpu.edge + cpu.agent : Number.NaN;
      }),
    })),
    tunnelToFloor: over((r) => r.tunnel!.rps / r.floor!.rps),
  };
}

/** The comparison as a markdown table. */
export function floorMarkdown(result: FloorResult, command: string): string {
  const n = result.rounds.length;
  const lines = [
    '## Small GET: direct, svcRouter, the bare relay floor',
    '',
    `- Command: \`${command}\``,
    `- Medians of ${n} interleaved round${n === 1 ? '' : 's'} (each side once per round, in the order below); ratios are medians of each round's ratio to its direct run.`,
    '- Floor: bench/src/floor-relay.ts, two Node processes relaying raw bytes over one TCP session and doing no other work; "+ N µs" spins that long per request in each of them.',
    "- Floor with HTTP/1.1 on the edge: the floor's edge reads, rewrites and writes each request and response head with svcRouter's own code (bench/src/floor-http-edge.ts); its agent only moves bytes, one origin connection per visitor connection.",
    '',
    '| side | req/s | ratio to direct | p99, ms | CPU per request, the two relay processes, µs | machine idle |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const side of result.sides) {
    const ratio =
      side.key === 'tunnel' ? `${side.ratio.toFixed(2)}× (${result.tunnelToFloor.toFixed(2)}× the floor)` : `${side.ratio.toFixed(2)}×`;
    const cpu = Number.isNaN(side.cpuUsPerRequest) ? '—' : side.cpuUsPerRequest.toFixed(1);
    lines.push(
      `| ${side.label} | ${side.rps.toFixed(0)} | ${ratio} | ${side.p99Ms.toFixed(2)} | ${cpu} | ${side.idlePercent.toFixed(1)}% |`,
    );
  }
  return lines.join('\n');
}
