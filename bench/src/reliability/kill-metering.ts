/**
 * kill -9 of the server under metered load: `node bench/dist/reliability/kill-metering.js
 * [--kills=20] [--flushMs=1000] [--minMs=300] [--maxMs=3000] [--downloads=2] [--uploads=2]`.
 *
 * A real `svc-server` (SQLite store in a temporary data dir) and a real `svc http` to an origin
 * in this process. Visitors download and upload bodies of known sizes through the tunnel; at a
 * random moment the server gets SIGKILL, then restarts on the same store file and ports, and the
 * agent reconnects by itself. After each kill the store is read directly: the account's metered
 * bytes (`usage_monthly`) and `PRAGMA integrity_check`.
 *
 * What counts is what docs/metering-and-inspector.md defines: body bytes both ways, heads not.
 * "Real" is counted at the visitors: response-body bytes they received plus request-body bytes
 * their sockets accepted. Also kept: what the far end got (visitors' received bytes plus the
 * origin's received upload bytes), which is the tightest measure of what crossed the edge.
 * The invariant printed for each kill: recorded ≤ real (never an overcount). What each kill lost
 * is set beside what crossed in the last flush interval (+250 ms) before it, its bound.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { maxInWindow, sendBody } from '@svcrouter/testkit';
import Database from 'better-sqlite3';
import { AGENT_BIN, type Proc, SERVER_BIN, spawnNode, tempDir } from '../proc.js';
import { checkArgs, conditions, flag } from './common.js';

const USAGE = `Usage: node bench/dist/reliability/kill-metering.js [--kills=20] [--flushMs=1000] [--minMs=300] [--maxMs=3000] [--downloads=2] [--uploads=2]
  --kills      SIGKILLs of svc-server, each under load (default 20)
  --flushMs    SVC_USAGE_FLUSH_MS of the server (default 1000, the server's default)
  --minMs, --maxMs
               the kill comes at a random moment this long after the load resumed (default 300–3000)
  --downloads  visitors downloading 4 MiB bodies in a loop (default 2)
  --uploads    visitors uploading 2 MiB bodies in a loop (default 2)`;
checkArgs(USAGE, ['kills', 'flushMs', 'minMs', 'maxMs', 'downloads', 'uploads']);
const kills = flag('kills', 20);
const flushMs = flag('flushMs', 1000);
const minMs = flag('minMs', 300);
const maxMs = flag('maxMs', 3000);
const downloaders = flag('downloads', 2);
const uploaders = flag('uploads', 2);
if (maxMs < minMs || kills < 1 || flushMs < 100) {
  process.stderr.write(`need --kills ≥ 1, --flushMs ≥ 100 and --minMs ≤ --maxMs\n${USAGE}\n`);
  process.exit(2);
}
const DOWNLOAD_BYTES = 4 * 1024 * 1024;
const UPLOAD_BYTES = 2 * 1024 * 1024;
const PIECE = Buffer.alloc(64 * 1024, 0x62);
const SUBDOMAIN = 'metered';
const PLANS = JSON.stringify({ free: { tunnels: 10, bandwidthBytes: 1e15 } });
/** The flush's own duration and timer lateness under load, on top of the interval. */
const FLUSH_SLACK_MS = 250;

/** Byte counters, cumulative over the whole run. */
const bytes = { visitorReceived: 0, visitorSent: 0, originSent: 0, originReceived: 0 };
/** [ms, visitor-side real total] at each counted chunk of the current cycle. */
let timeline: Array<[number, number]> = [];
/** The visitor-side real total when the current cycle began. */
let cycleBase = 0;
const real = (): number => bytes.visitorReceived + bytes.visitorSent;
const note = (): void => void timeline.push([performance.now(), real()]);

const origin = http.createServer((req, res) => {
  if (req.url?.startsWith('/up')) {
    req.on('data', (chunk: Buffer) => (bytes.originReceived += chunk.length));
    req.on('end', () => res.writeHead(200, { 'content-length': '0' }).end());
    req.on('error', () => undefined);
    return;
  }
  let left = DOWNLOAD_BYTES;
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(left) });
  const pump = (): void => {
    while (left > 0 && !res.destroyed) {
      const piece = left >= PIECE.length ? PIECE : PIECE.subarray(0, left);
      left -= piece.length;
      bytes.originSent += piece.length;
      if (!res.write(piece)) return void res.once('drain', pump);
    }
    res.end();
  };
  pump();
});
origin.on('clientError', (_error, socket) => socket.destroy());
await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
const originPort = (origin.address() as AddressInfo).port;

const data = await tempDir('svc-kill-metering-');
const dbFile = path.join(data.dir, 'svc.sqlite');
let httpPort = 0;
let httpsPort = 0;
const startServer = async (): Promise<Proc> => {
  const server = spawnNode(SERVER_BIN, ['start'], {
    label: 'server',
    env: {
      SVC_DATA_DIR: data.dir,
      SVC_HTTP_PORT: String(httpPort),
      SVC_HTTPS_PORT: String(httpsPort),
      SVC_BIND_HOST: '127.0.0.1',
      SVC_PLANS: PLANS,
      SVC_USAGE_FLUSH_MS: String(flushMs),
    },
  });
  httpPort = Number((await server.waitForLine(/REST API\s+http:\/\/[^:]+:(\d+)\/v1/))[1]);
  httpsPort = Number((await server.waitForLine(/tunnels\s+https:\/\/\S+:(\d+) /))[1]);
  return server;
};

const visitorRequest = (method: string, urlPath: string, headers: Record<string, string> = {}): http.ClientRequest =>
  http.request({
    host: '127.0.0.1',
    port: httpPort,
    method,
    path: urlPath,
    agent: false,
    headers: { host: `${SUBDOMAIN}.localhost:${httpPort}`, ...headers },
  });

/** One download; resolves when it ends, whole or cut. */
const download = (): Promise<void> =>
  new Promise((resolve) => {
    const req = visitorRequest('GET', '/down');
    req.on('response', (res) => {
      res.on('data', (chunk: Buffer) => {
        // Only the origin's answers are metered traffic; an offline page is the edge's own.
        if (res.statusCode === 200 && res.headers['content-type'] === 'application/octet-stream') {
          bytes.visitorReceived += chunk.length;
          note();
        }
      });
      res.on('close', () => resolve());
      res.on('error', () => resolve());
    });
    req.on('error', () => resolve());
    req.end();
  });

/** One upload of UPLOAD_BYTES; a piece counts once the socket accepted it. */
const upload = (): Promise<void> =>
  sendBody(
    visitorRequest('POST', '/up', { 'content-length': String(UPLOAD_BYTES), 'content-type': 'application/octet-stream' }),
    UPLOAD_BYTES,
    PIECE,
    (accepted) => {
      bytes.visitorSent += accepted;
      note();
    },
  );

/** GET through the tunnel until the origin answers: the agent is back on the restarted edge. */
const waitForTunnel = async (): Promise<number> => {
  const started = performance.now();
  for (;;) {
    const status = await new Promise<number>((resolve) => {
      const req = visitorRequest('GET', '/up');
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200 && res.headers['content-length'] === '0' ? 200 : (res.statusCode ?? 0)));
      });
      req.on('error', () => resolve(0));
      req.end();
    });
    if (status === 200) return performance.now() - started;
    if (performance.now() - started > 60_000) throw new Error(`the agent did not come back within 60 s (last status ${status})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

/** The account's stored usage and the file's integrity, read with the server dead. */
const readStore = (): { recorded: number; integrity: string } => {
  const db = new Database(dbFile);
  try {
    const integrity = (db.pragma('integrity_check') as Array<{ integrity_check: string }>).map((r) => r.integrity_check).join('; ');
    const row = db.prepare('SELECT COALESCE(SUM(bytes), 0) AS bytes FROM usage_monthly').get() as { bytes: number };
    return { recorded: row.bytes, integrity };
  } finally {
    db.close();
  }
};

console.log(`machine: ${conditions()}`);
console.log(
  `load: ${downloaders} visitors downloading ${DOWNLOAD_BYTES / 2 ** 20} MiB bodies, ${uploaders} uploading ${UPLOAD_BYTES / 2 ** 20} MiB bodies, in loops; flush interval ${flushMs} ms`,
);
let server = await startServer();
const token = (await server.waitForLine(/^\s+(svc_[A-Za-z0-9_-]{43})$/))[1]!;
const agent = spawnNode(AGENT_BIN, ['http', `127.0.0.1:${originPort}`], {
  label: 'agent',
  env: { SVC_SERVER: `http://localhost:${httpPort}`, SVC_TOKEN: token, SVC_SUBDOMAIN: SUBDOMAIN },
});
let overcounts = 0;
let integrityFailures = 0;
let maxLossShare = 0;
let beyondBound = 0;
try {
  await agent.waitForLine(/^Forwarding https:\/\//);
  agent.drainStdout();
  let previousGap = 0;
  for (let kill = 1; kill <= kills; kill++) {
    const backMs = await waitForTunnel();
    timeline = [];
    cycleBase = real();
    let running = true;
    const loop = async (once: () => Promise<void>): Promise<void> => {
      while (running) await once();
    };
    const workers = [
      ...Array.from({ length: downloaders }, () => loop(download)),
      ...Array.from({ length: uploaders }, () => loop(upload)),
    ];
    const afterMs = minMs + Math.random() * (maxMs - minMs);
    await new Promise((resolve) => setTimeout(resolve, afterMs));
    const atKill = real();
    const killedAt = performance.now();
    running = false;
    await server.kill('SIGKILL');
    await Promise.all(workers);
    const drained = real() - atKill;
    const window = maxInWindow(timeline, flushMs + FLUSH_SLACK_MS, cycleBase);
    timeline = timeline.filter(([t]) => t <= killedAt);
    const { recorded, integrity } = readStore();
    const now = real();
    const farEnd = bytes.visitorReceived + bytes.originReceived;
    const gap = now - recorded;
    const lost = gap - previousGap;
    previousGap = gap;
    if (recorded > now) overcounts++;
    if (integrity !== 'ok') integrityFailures++;
    const cycle = now - cycleBase;
    maxLossShare = Math.max(maxLossShare, lost / Math.max(1, window + drained));
    if (lost > window + drained) beyondBound++;
    console.log(
      `kill ${String(kill).padStart(2)} at ${afterMs.toFixed(0)} ms (agent back in ${backMs.toFixed(0)} ms): real ${now}, far end ${farEnd}, recorded ${recorded} ` +
        `(${recorded <= now ? 'recorded ≤ real' : `OVERCOUNT by ${recorded - now}`}${recorded <= farEnd ? '' : `; above far end by ${recorded - farEnd}`}); ` +
        `this cycle moved ${cycle}, lost ${lost} (bound: ${window} in the last ${flushMs + FLUSH_SLACK_MS} ms + ${drained} drained after the kill); integrity ${integrity}`,
    );
    server = await startServer();
  }
  const backMs = await waitForTunnel();
  const { used } = (await (
    await fetch(`http://127.0.0.1:${httpPort}/v1/usage`, { headers: { authorization: `Bearer ${token}`, host: `localhost:${httpPort}` } })
  ).json()) as { used: { bandwidthBytes: number } };
  console.log(
    `after ${kills} kills: real ${real()} bytes (received ${bytes.visitorReceived}, sent ${bytes.visitorSent}; origin sent ${bytes.originSent}, received ${bytes.originReceived}); ` +
      `GET /v1/usage on the restarted server ${used.bandwidthBytes}; lost ${real() - used.bandwidthBytes} in all; agent back in ${backMs.toFixed(0)} ms`,
  );
  console.log(
    `result: ${overcounts} overcounts, ${integrityFailures} integrity failures, ${beyondBound} losses beyond their bound in ${kills} kills; largest loss ${(maxLossShare * 100).toFixed(0)}% of its bound`,
  );
} finally {
  await agent.stop('SIGINT');
  await server.stop('SIGTERM');
  await new Promise<void>((resolve) => origin.close(() => resolve()));
  origin.closeAllConnections();
  await data.remove();
}
