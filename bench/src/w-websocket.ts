import WebSocket from 'ws';
import type { Sizes } from './options.js';
import { matchedPairs, percentile, summarise } from './stats.js';
import { TUNNEL_HOST, type BenchSystem } from './system.js';

/** Message of every round trip: small, so the figure is latency, not bandwidth. */
const MESSAGE = Buffer.alloc(32, 'w');

export interface WebSocketResult {
  /** Median round trip, ms. */
  rttMs: { direct: number; tunnel: number; ratio: number };
  /** 99th percentile round trip, ms. */
  p99Ms: { direct: number; tunnel: number; ratio: number };
}

/** Opens a WebSocket to /ws, does `warmup` unrecorded and `trips` recorded echo round trips, one at a time. */
async function echoRun(port: number, trips: number, warmup: number): Promise<{ median: number; p99: number }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { host: TUNNEL_HOST }, perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`WebSocket upgrade answered ${res.statusCode}`)));
  });
  const rtts: number[] = [];
  let answered: (() => void) | undefined;
  let failed: ((error: Error) => void) | undefined;
  ws.on('message', () => answered?.());
  ws.once('close', () => failed?.(new Error('WebSocket closed mid-run')));
  try {
    for (let i = 0; i < warmup + trips; i++) {
      const started = performance.now();
      await new Promise<void>((resolve, reject) => {
        answered = resolve;
        failed = reject;
        ws.send(MESSAGE);
      });
      if (i >= warmup) rtts.push(performance.now() - started);
    }
  } finally {
    failed = undefined;
    ws.terminate();
  }
  return { median: percentile(rtts, 50), p99: percentile(rtts, 99) };
}

/** WebSocket echo round-trip time, direct vs tunnel in matched pairs. */
export async function websocketEcho(system: BenchSystem, sizes: Sizes, log: (line: string) => void): Promise<WebSocketResult> {
  const pairs = await matchedPairs(sizes.wsRounds, async (side) => {
    const run = await echoRun(side === 'direct' ? system.originPort : system.httpPort, sizes.wsTrips, Math.ceil(sizes.wsTrips / 10));
    log(`  WS  ${side.padEnd(6)} median ${(run.median * 1000).toFixed(0)} µs  p99 ${(run.p99 * 1000).toFixed(0)} µs`);
    return run;
  });
  return { rttMs: summarise(pairs, (r) => r.median), p99Ms: summarise(pairs, (r) => r.p99) };
}
