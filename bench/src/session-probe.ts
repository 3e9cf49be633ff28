/**
 * Entry of the benchmark's many-sessions process (`node --expose-gc bench/dist/session-probe.js`):
 * opens agent sessions with the SDK's forward(), one tunnel each, as that many quiet laptops
 * would, driven over IPC so the edge can be measured between phases. Commands:
 * - `open {count, tls}`: that many more sessions (a bounded number dialling at once) → {ms};
 * - `cpu`: this process's CPU seconds so far;
 * - `mem`: memory after a forced GC; `fds`: open file descriptors;
 * - `visit {seconds, perMinute}`: GETs each held tunnel `perMinute` times a minute, spread
 *   evenly, for `seconds` → {sent, ok};
 * - `close`: closes every session cleanly; `exit`.
 * Settings come from argv: <serverUrl> <httpsUrl> <caFile> <token> <originAddr> <edgeHttpPort>.
 */
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { forward, type Tunnel } from '@svcrouter/sdk';
import { gcAndMeasure, serveIpc } from './ipc.js';

const [serverUrl = '', httpsUrl = '', caFile = '', token = '', addr = '', edgePort = '0'] = process.argv.slice(2);
const held: Tunnel[] = [];
/** Sessions dialling at once per helper: enough to keep the edge busy, few enough not to time out dials. */
const DIAL_CONCURRENCY = 32;
/** Dials per session before the run fails: a dial that times out on a busy machine is tried again. */
const START_ATTEMPTS = 8;
const visitAgent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** GET / on `hostname` through the edge; resolves with the status (0 on a network error). */
function visit(hostname: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(
      { host: '127.0.0.1', port: Number(edgePort), path: '/small', headers: { host: `${hostname}:${edgePort}` }, agent: visitAgent },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
  });
}

serveIpc({
  async open(request) {
    const count = Number(request.count);
    const tls = request.tls === true;
    const ca = tls ? readFileSync(caFile) : undefined;
    const started = performance.now();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < count) {
        next++;
        held.push(await forward({ addr, token, serverUrl: tls ? httpsUrl : serverUrl, ca, inspect: false, startAttempts: START_ATTEMPTS }));
      }
    };
    await Promise.all(Array.from({ length: Math.min(DIAL_CONCURRENCY, count) }, worker));
    return { ms: performance.now() - started };
  },
  cpu() {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1e6;
  },
  mem: () => gcAndMeasure(),
  fds: () => readdirSync('/proc/self/fd').length,
  async visit(request) {
    const seconds = Number(request.seconds);
    const perMinute = Number(request.perMinute);
    const total = Math.floor((held.length * perMinute * seconds) / 60);
    const gapMs = (seconds * 1000) / Math.max(1, total);
    let ok = 0;
    const inFlight: Promise<void>[] = [];
    const started = performance.now();
    for (let i = 0; i < total; i++) {
      const due = started + i * gapMs;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const tunnel = held[i % held.length]!;
      inFlight.push(visit(tunnel.hostname).then((status) => void (status === 200 && ok++)));
    }
    await Promise.all(inFlight);
    // The window lasts `seconds` even when the last request left early (few sessions).
    const rest = started + seconds * 1000 - performance.now();
    if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
    return { sent: total, ok };
  },
  async close() {
    await Promise.all(held.splice(0).map((tunnel) => tunnel.close()));
    return true;
  },
  exit() {
    setImmediate(() => process.exit(0));
    return true;
  },
});
