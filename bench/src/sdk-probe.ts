/**
 * Entry of the benchmark's SDK process (`node --expose-gc bench/dist/sdk-probe.js`): an agent
 * built on the SDK, driven over IPC, so tunnels can be bound in phases and memory read after
 * a forced GC between them. Commands:
 * - `bind {count}`: one new session with `count` tunnels (forwardMany) → {ms, hostnames};
 * - `mem`: memory after a forced GC;
 * - `latency {n}`: n × (forward() → first 200 through the edge → close) → {bindMs[], firstMs[]};
 * - `exit`.
 * Settings come from argv: <serverUrl> <token> <originAddr> <edgeHttpPort>.
 */
import http from 'node:http';
import { forward, forwardMany, type Tunnel } from '@svcrouter/sdk';
import { gcAndMeasure, serveIpc } from './ipc.js';

const [serverUrl = '', token = '', addr = '', edgePort = '0'] = process.argv.slice(2);
const held: Tunnel[] = [];

/** GET `path` on `hostname` through the edge; resolves with the status. */
function visit(hostname: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: '127.0.0.1', port: Number(edgePort), path, headers: { host: `${hostname}:${edgePort}` }, agent: false },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
  });
}

serveIpc({
  async bind(request) {
    const count = Number(request.count);
    const started = performance.now();
    const tunnels = await forwardMany(
      { token, serverUrl },
      Array.from({ length: count }, () => ({ addr })),
    );
    const ms = performance.now() - started;
    held.push(...tunnels);
    return { ms, hostnames: tunnels.map((t) => t.hostname) };
  },
  mem: () => gcAndMeasure(),
  async latency(request) {
    const bindMs: number[] = [];
    const firstMs: number[] = [];
    for (let i = 0; i < Number(request.n); i++) {
      const started = performance.now();
      const tunnel = await forward({ addr, token, serverUrl });
      bindMs.push(performance.now() - started);
      const status = await visit(tunnel.hostname, '/small');
      if (status !== 200) throw new Error(`fresh tunnel answered ${status}`);
      firstMs.push(performance.now() - started);
      await tunnel.close();
    }
    return { bindMs, firstMs };
  },
  exit() {
    setImmediate(() => process.exit(0));
    return true;
  },
});
