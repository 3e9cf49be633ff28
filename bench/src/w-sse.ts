import http from 'node:http';
import type { Sizes } from './options.js';
import { epochMs, matchedPairs, median } from './stats.js';
import { TUNNEL_HOST, type BenchSystem } from './system.js';

/** One SSE stream as the visitor saw it. */
interface SseRun {
  /** Request start to the first event's arrival, ms. */
  firstMs: number;
  /** Per event: arrival minus the origin's send time, ms (includes a constant clock offset between processes). */
  delaysMs: number[];
}

export interface SseResult {
  firstMs: { direct: number; tunnel: number; diff: number };
  /** Median per-event delay on each side, ms. */
  delayMs: { direct: number; tunnel: number };
  /**
   * Worst event over all pairs: tunnel delay minus the direct run's median delay in the same
   * pair, which cancels the clock offset between origin and visitor processes.
   */
  worstExtraDelayMs: number;
}

/** Reads one event stream to its end. */
function readEvents(port: number, count: number, intervalMs: number): Promise<SseRun> {
  return new Promise((resolve, reject) => {
    const started = epochMs();
    const delaysMs: number[] = [];
    let firstMs = Number.NaN;
    const req = http.get(
      {
        host: '127.0.0.1',
        port,
        path: `/sse?count=${count}&interval=${intervalMs}`,
        headers: { host: TUNNEL_HOST, accept: 'text/event-stream' },
        agent: false,
      },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`SSE answered ${res.statusCode}`));
        res.setEncoding('utf8');
        let buffered = '';
        res.on('data', (chunk: string) => {
          const arrived = epochMs();
          buffered += chunk;
          let end: number;
          while ((end = buffered.indexOf('\n\n')) >= 0) {
            const event = buffered.slice(0, end);
            buffered = buffered.slice(end + 2);
            const data = event.match(/^data: (.*)$/m);
            if (!data) continue;
            const { i, t } = JSON.parse(data[1]!) as { i: number; t: number };
            if (i === 0) firstMs = arrived - started;
            delaysMs.push(arrived - t);
          }
        });
        res.on('end', () => {
          if (delaysMs.length !== count) reject(new Error(`SSE delivered ${delaysMs.length}/${count} events`));
          else resolve({ firstMs, delaysMs });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
  });
}

/** SSE: time to the first event, and each event's delay, direct vs tunnel in matched pairs. */
export async function sse(system: BenchSystem, sizes: Sizes, log: (line: string) => void): Promise<SseResult> {
  const pairs = await matchedPairs(sizes.sseRounds, async (side) => {
    const run = await readEvents(side === 'direct' ? system.originPort : system.httpPort, sizes.sseEvents, sizes.sseIntervalMs);
    log(`  SSE ${side.padEnd(6)} first ${run.firstMs.toFixed(2)} ms  max delay ${Math.max(...run.delaysMs).toFixed(2)} ms`);
    return run;
  });
  const extra = pairs.flatMap((p) => {
    const base = median(p.direct.delaysMs);
    return p.tunnel.delaysMs.map((d) => d - base);
  });
  return {
    firstMs: {
      direct: median(pairs.map((p) => p.direct.firstMs)),
      tunnel: median(pairs.map((p) => p.tunnel.firstMs)),
      diff: median(pairs.map((p) => p.tunnel.firstMs - p.direct.firstMs)),
    },
    delayMs: { direct: median(pairs.flatMap((p) => p.direct.delaysMs)), tunnel: median(pairs.flatMap((p) => p.tunnel.delaysMs)) },
    worstExtraDelayMs: Math.max(...extra),
  };
}
