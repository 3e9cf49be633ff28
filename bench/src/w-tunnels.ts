import http from 'node:http';
import type { MemorySample } from './ipc.js';
import type { Sizes } from './options.js';
import { vmRssBytes } from './proc.js';
import { median } from './stats.js';
import { startSdkProbe, type BenchSystem } from './system.js';

export interface TunnelsResult {
  count: number;
  /** Binding `count` tunnels on one session (forwardMany), seconds; and per bind, ms. */
  bindAllS: number;
  bindEachMs: number;
  /** Tunnels that answered 200 to one request each, and how long checking all took. */
  responding: number;
  checkS: number;
  /** Bytes per extra idle tunnel after a forced GC (V8 heap + external), and by VmRSS. */
  edgeBytesPerTunnel: number;
  edgeRssBytesPerTunnel: number;
  agentBytesPerTunnel: number;
  agentRssBytesPerTunnel: number;
  /** forward() from nothing to bound (dial, upgrade, auth, bind), and to the first 200 through the edge; medians, ms. */
  bindLatencyMs: number;
  firstResponseMs: number;
}

interface Mem {
  heap: number;
  rss: number;
}

const heapOf = (sample: MemorySample): number => sample.heapUsed + sample.external;

/**
 * Idle-tunnel memory on both sides, 1,000 tunnels from one process, and bind latency, with the
 * SDK in its own process. Memory is read in three points so the per-session cost drops out:
 * m0 after a warm-up session (2 tunnels), m1 after a session with 1 tunnel, m2 after a session
 * with N tunnels; per extra tunnel = ((m2 - m1) - (m1 - m0)) / (N - 1).
 */
export async function manyTunnels(system: BenchSystem, sizes: Sizes, log: (line: string) => void): Promise<TunnelsResult> {
  const probe = startSdkProbe(system);
  try {
    const measure = async (): Promise<{ edge: Mem; agent: Mem }> => {
      const edge = await system.edgeMemory();
      const agent = (await probe.call('mem')) as MemorySample;
      // VmRSS read right after the GC the probe just ran.
      return {
        edge: { heap: heapOf(edge), rss: vmRssBytes(system.server.pid) },
        agent: { heap: heapOf(agent), rss: vmRssBytes(probe.proc.pid) },
      };
    };
    await probe.call('bind', { count: 2 });
    const m0 = await measure();
    await probe.call('bind', { count: 1 });
    const m1 = await measure();
    const n = sizes.tunnels;
    const bound = (await probe.call('bind', { count: n })) as { ms: number; hostnames: string[] };
    const m2 = await measure();
    const perTunnel = (pick: (m: { edge: Mem; agent: Mem }) => number): number =>
      (pick(m2) - pick(m1) - (pick(m1) - pick(m0))) / Math.max(1, n - 1);
    log(`  ${n} tunnels bound in ${(bound.ms / 1000).toFixed(2)} s`);

    const checkStarted = performance.now();
    const responding = await checkAll(system.httpPort, bound.hostnames);
    const checkS = (performance.now() - checkStarted) / 1000;
    log(`  ${responding}/${n} tunnels answered 200 in ${checkS.toFixed(2)} s`);

    const latency = (await probe.call('latency', { n: sizes.bindSamples })) as { bindMs: number[]; firstMs: number[] };
    log(`  bind latency median ${median(latency.bindMs).toFixed(1)} ms (first 200 at ${median(latency.firstMs).toFixed(1)} ms)`);
    return {
      count: n,
      bindAllS: bound.ms / 1000,
      bindEachMs: bound.ms / n,
      responding,
      checkS,
      edgeBytesPerTunnel: perTunnel((m) => m.edge.heap),
      edgeRssBytesPerTunnel: perTunnel((m) => m.edge.rss),
      agentBytesPerTunnel: perTunnel((m) => m.agent.heap),
      agentRssBytesPerTunnel: perTunnel((m) => m.agent.rss),
      bindLatencyMs: median(latency.bindMs),
      firstResponseMs: median(latency.firstMs),
    };
  } finally {
    await probe.call('exit').catch(() => undefined);
    await probe.proc.exited;
  }
}

/** One GET per hostname through the edge, 50 at a time; resolves with how many answered 200. */
async function checkAll(port: number, hostnames: readonly string[]): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
  let ok = 0;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < hostnames.length) {
      const hostname = hostnames[next++]!;
      const status = await new Promise<number>((resolve) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/small', headers: { host: `${hostname}:${port}` }, agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', () => resolve(0));
      });
      if (status === 200) ok++;
    }
  };
  await Promise.all(Array.from({ length: 50 }, worker));
  agent.destroy();
  return ok;
}
