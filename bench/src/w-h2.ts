import type { Sizes } from './options.js';
import { cpuOf } from './proc.js';
import { matchedPairs, median, summarise } from './stats.js';
import type { BenchSystem } from './system.js';
import { h2Upload, runH2load, type H2LoadResult } from './h2-clients.js';
import { upload } from './w-transfer.js';

const MIB = 1024 * 1024;

export interface H2SmallGetResult {
  rps: { direct: number; tunnel: number; ratio: number };
  meanMs: { direct: number; tunnel: number; ratio: number };
  errors: { direct: number; tunnel: number };
  /** Median CPU microseconds per request, edge + agent, through the tunnel. */
  cpuUsPerRequest: number;
}

export interface H2UploadResult {
  bytes: number;
  /** HTTP/2 upload, straight to the HTTP/2 origin and through the edge. */
  mibPerS: { direct: number; tunnel: number; ratio: number };
  /** Through the edge: HTTP/2 against HTTP/1.1 over TLS, in the same rounds; ratio = median of h2 / https per round. */
  againstHttps: { https: number; h2: number; ratio: number };
}

/**
 * The small GET over HTTP/2 with TLS (h2load, 50 sessions of one stream each): straight to the
 * HTTP/2 origin and through the edge's TLS listener, in matched pairs after a warm-up of each side.
 */
export async function h2SmallGet(system: BenchSystem, sizes: Sizes, log: (line: string) => void): Promise<H2SmallGetResult> {
  const port = (side: 'direct' | 'tunnel'): number => (side === 'direct' ? system.originH2Port : system.httpsPort);
  if (sizes.w1WarmupS > 0)
    for (const side of ['direct', 'tunnel'] as const) await runH2load(port(side), sizes.connections, sizes.w1WarmupS);
  const pids = [system.server.pid, system.agent.pid];
  const pairs = await matchedPairs<H2LoadResult & { cpuS: number }>(sizes.w1Rounds, async (side) => {
    const cpu0 = cpuOf(pids);
    const run = await runH2load(port(side), sizes.connections, sizes.w1DurationS);
    const cpuS = side === 'tunnel' ? cpuOf(pids) - cpu0 : 0;
    log(`  h2 small GET ${side.padEnd(6)} ${run.rps.toFixed(0)} req/s  mean ${run.meanMs.toFixed(2)} ms  errors ${run.errors}`);
    return { ...run, cpuS };
  });
  return {
    rps: summarise(pairs, (r) => r.rps),
    meanMs: summarise(pairs, (r) => r.meanMs),
    errors: { direct: pairs.reduce((s, p) => s + p.direct.errors, 0), tunnel: pairs.reduce((s, p) => s + p.tunnel.errors, 0) },
    cpuUsPerRequest: median(pairs.map((p) => (p.tunnel.cpuS * 1e6) / Math.max(1, p.tunnel.requests))),
  };
}

/**
 * Uploads of `sizes.transferBytes` over HTTP/2 with TLS, in rounds of three after a warm-up of
 * each: straight to the HTTP/2 origin, through the edge, and through the edge over HTTP/1.1
 * with TLS, the last being what the HTTP/2 upload through the edge is held against.
 */
export async function h2Uploads(system: BenchSystem, sizes: Sizes, log: (line: string) => void): Promise<H2UploadResult> {
  const bytes = sizes.transferBytes;
  const kinds = [
    { name: 'h2 direct', run: () => h2Upload(system.originH2Port, bytes) },
    { name: 'h2 tunnel', run: () => h2Upload(system.httpsPort, bytes) },
    { name: 'https tunnel', run: () => upload(system.httpsPort, bytes, true) },
  ];
  for (let i = 0; i < sizes.transferWarmups; i++) for (const kind of kinds) await kind.run();
  const rounds: number[][] = [];
  for (let round = 0; round < sizes.transferRounds; round++) {
    const rates: number[] = [];
    for (const kind of kinds) {
      const rate = bytes / MIB / (await kind.run());
      log(`  upload ${kind.name.padEnd(12)} ${rate.toFixed(0)} MiB/s`);
      rates.push(rate);
    }
    rounds.push(rates);
  }
  const pairs = rounds.map(([direct, tunnel]) => ({ direct: direct!, tunnel: tunnel! }));
  return {
    bytes,
    mibPerS: summarise(pairs, (r) => r),
    againstHttps: {
      https: median(rounds.map((r) => r[2]!)),
      h2: median(rounds.map((r) => r[1]!)),
      ratio: median(rounds.map((r) => r[1]! / r[2]!)),
    },
  };
}
