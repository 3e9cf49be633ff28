/**
 * A sustained run at the highest rate the machine sustains: `node --expose-gc
 * bench/dist/reliability/sustained.js [--seconds=600] [--connections=50]`. A closed-loop load
 * (wrk when installed, else the Node generator) of small GETs through one tunnel: it runs as
 * fast as edge and agent answer, so its rate is the highest sustainable one on this machine.
 * Prints the rate, errors, p99 and the RSS of edge and agent every 30 s, and the drift from the
 * first sample (after a 20 s warm-up) to the last.
 */
import { pickLoadGenerator, runLoad } from '../loadgen.js';
import { startSystem, TUNNEL_HOST } from '../system.js';
import { conditions, flag, MIB } from './common.js';
import { vmRssBytes } from '../proc.js';

const seconds = flag('seconds', 600);
const connections = flag('connections', 50);
const generator = pickLoadGenerator();
console.log(`machine: ${conditions()}; load generator ${generator}`);
const system = await startSystem();
try {
  const load = (durationS: number) =>
    runLoad(generator, { port: system.httpPort, path: '/small', host: TUNNEL_HOST, connections, durationS });
  const warm = await load(20);
  console.log(`warm-up 20 s: ${warm.rps.toFixed(0)} req/s, ${warm.errors} errors`);
  const rss = (): [number, number] => [vmRssBytes(system.server.pid) / MIB, vmRssBytes(system.agent.pid) / MIB];
  const first = rss();
  console.log(`start: edge RSS ${first[0].toFixed(1)} MiB, agent RSS ${first[1].toFixed(1)} MiB`);
  let requests = 0;
  let errors = 0;
  for (let done = 0; done < seconds; done += 30) {
    const step = Math.min(30, seconds - done);
    const r = await load(step);
    requests += r.requests;
    errors += r.errors;
    const [edge, agent] = rss();
    console.log(
      `t=${done + step} s: ${r.rps.toFixed(0)} req/s, p99 ${r.p99Ms.toFixed(1)} ms, ${r.errors} errors; edge RSS ${edge.toFixed(1)} MiB, agent RSS ${agent.toFixed(1)} MiB`,
    );
  }
  const last = rss();
  console.log(
    `total: ${requests} requests in ${seconds} s (${(requests / seconds).toFixed(0)} req/s), ${errors} errors; RSS drift edge ${(last[0] - first[0]).toFixed(1)} MiB, agent ${(last[1] - first[1]).toFixed(1)} MiB`,
  );
} finally {
  await system.close();
}
