import http from 'node:http';
import { runLoad, type LoadGenerator } from './loadgen.js';
import type { Sizes } from './options.js';
import { matchedPairs, median, summarise } from './stats.js';
import type { BenchSystem } from './system.js';
import { smallGetSpec, tunnelLoad, type TunnelLoad } from './w-small-get.js';

export interface StreamSubscriberResult {
  /** Small GET through the tunnel without and with one live-stream subscriber attached. */
  rps: { without: number; with: number; ratio: number };
  /** Median CPU microseconds per request, edge + agent, for each. */
  cpuUsPerRequest: { without: number; with: number };
  /** Over the runs with the subscriber: request events it received, and records it was told it missed. */
  events: number;
  dropped: number;
}

/** One open GET /v1/requests/stream, counting what arrives. */
interface Subscriber {
  events: number;
  dropped: number;
  close(): void;
}

/**
 * Opens the live request stream the way an open dashboard does, reading everything, and
 * resolves once the server has subscribed it (its first bytes arrived).
 */
function subscribe(system: BenchSystem): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const subscriber: Subscriber = { events: 0, dropped: 0, close: () => req.destroy() };
    const req = http.get(
      {
        host: '127.0.0.1',
        port: system.httpPort,
        path: '/v1/requests/stream',
        headers: { host: `localhost:${system.httpPort}`, authorization: `Bearer ${system.token}` },
        agent: false,
      },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`the request stream answered ${res.statusCode}`));
        res.setEncoding('utf8');
        let buffered = '';
        res.once('data', () => resolve(subscriber));
        res.on('data', (chunk: string) => {
          buffered += chunk;
          const end = buffered.lastIndexOf('\n\n');
          if (end < 0) return;
          const complete = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          subscriber.events += complete.split('event: request\n').length - 1;
          for (const match of complete.matchAll(/^event: dropped\ndata: (.*)$/gm))
            subscriber.dropped += (JSON.parse(match[1]!) as { dropped: number }).dropped;
        });
        res.on('error', () => undefined);
      },
    );
    req.on('error', (error) => reject(error));
  });
}

/**
 * W1 through the tunnel in matched pairs: without, then with one subscriber of
 * GET /v1/requests/stream attached (an open dashboard's live Traffic table). The inspector
 * publishes every captured request to it, so the difference is what following the traffic
 * live costs the tunnel.
 */
export async function streamSubscriber(
  system: BenchSystem,
  generator: LoadGenerator,
  sizes: Sizes,
  log: (line: string) => void,
): Promise<StreamSubscriberResult> {
  const spec = smallGetSpec(system, 'tunnel', sizes, sizes.w1DurationS);
  if (sizes.w1WarmupS > 0) await runLoad(generator, { ...spec, durationS: sizes.w1WarmupS });
  let events = 0;
  let dropped = 0;
  // 'direct' is the run without a subscriber here, 'tunnel' the run with one.
  const pairs = await matchedPairs<TunnelLoad>(sizes.w1Rounds, async (side) => {
    const subscriber = side === 'tunnel' ? await subscribe(system) : undefined;
    try {
      const run = await tunnelLoad(system, generator, spec);
      log(
        `  W1 ${subscriber ? 'with stream subscriber   ' : 'without stream subscriber'} ${run.rps.toFixed(0)} req/s  p99 ${run.p99Ms.toFixed(2)} ms  errors ${run.errors}`,
      );
      return run;
    } finally {
      if (subscriber) {
        events += subscriber.events;
        dropped += subscriber.dropped;
        subscriber.close();
      }
    }
  });
  const perRequest = (runs: TunnelLoad[]): number => median(runs.map((r) => ((r.edgeCpuS + r.agentCpuS) * 1e6) / Math.max(1, r.requests)));
  const rps = summarise(pairs, (r) => r.rps);
  log(`  the subscriber received ${events} records and was told of ${dropped} it missed`);
  return {
    rps: { without: rps.direct, with: rps.tunnel, ratio: rps.ratio },
    cpuUsPerRequest: { without: perRequest(pairs.map((p) => p.direct)), with: perRequest(pairs.map((p) => p.tunnel)) },
    events,
    dropped,
  };
}
