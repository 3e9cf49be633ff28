/**
 * Slowloris and floods against a real edge: `node --expose-gc bench/dist/reliability/hostile-load.js
 * [--slow=2000] [--slowS=30] [--flood=5000] [--resets=20000]`. Each phase prints the edge's open
 * sockets (file descriptors) and RSS, and what a normal visitor got meanwhile (status, time).
 * - slowloris: `--slow` clients send a request head one header line every 5 s;
 * - connection flood: `--flood` TCP connections opened as fast as the kernel takes them, silent;
 * - HTTP/2 rapid reset: `--resets` streams opened and cancelled at once on one TLS session.
 */
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import { startSystem, TUNNEL_HOST } from '../system.js';
import { checkArgs, conditions, flag, openFds, rssMiB, timedGet } from './common.js';

checkArgs(
  `Usage: node --expose-gc bench/dist/reliability/hostile-load.js [--slow=2000] [--slowS=30] [--flood=5000] [--resets=20000]
  --slow    slowloris clients, each sending one header line every 5 s (default 2000)
  --slowS   how long the slowloris phase lasts, in seconds (default 30)
  --flood   silent TCP connections of the flood (default 5000)
  --resets  HTTP/2 streams opened and cancelled on one session (default 20000)`,
  ['slow', 'slowS', 'flood', 'resets'],
);

const slow = flag('slow', 2000);
const slowS = flag('slowS', 30);
const flood = flag('flood', 5000);
const resets = flag('resets', 20_000);

console.log(`machine: ${conditions()}`);
const system = await startSystem();
const { httpPort, server } = system;
const sample = async (label: string): Promise<void> => {
  const visit = await timedGet(httpPort, TUNNEL_HOST);
  console.log(
    `  ${label}: edge fds ${openFds(server.pid)}, RSS ${rssMiB(server.pid)} MiB; visitor ${visit.status} in ${visit.ms.toFixed(1)} ms`,
  );
};
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

try {
  await sample('idle');

  console.log(`slowloris: ${slow} clients, one header line every 5 s, for ${slowS} s`);
  const slowSockets: net.Socket[] = [];
  let slowClosedByEdge = 0;
  for (let i = 0; i < slow; i++) {
    const socket = net.connect(httpPort, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.on('close', () => slowClosedByEdge++);
    socket.write(`GET /small HTTP/1.1\r\nHost: ${TUNNEL_HOST}\r\n`);
    slowSockets.push(socket);
    if (i % 200 === 199) await pause(10);
  }
  const dribble = setInterval(() => {
    for (const socket of slowSockets) if (!socket.destroyed) socket.write(`x-slow-${Math.random().toString(36).slice(2, 6)}: 1\r\n`);
  }, 5000);
  for (let t = 0; t < slowS; t += 5) {
    await pause(5000);
    await sample(`t=${t + 5} s (${slow - slowClosedByEdge} slow sockets open)`);
  }
  clearInterval(dribble);
  for (const socket of slowSockets) socket.destroy();
  await pause(1000);
  await sample('after the slow clients left');

  console.log(`connection flood: ${flood} silent connections`);
  const started = performance.now();
  const floodSockets: net.Socket[] = [];
  let connected = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: flood }, () => {
      const socket = net.connect(httpPort, '127.0.0.1');
      floodSockets.push(socket);
      return new Promise<void>((resolve) => {
        socket.once('connect', () => {
          connected++;
          resolve();
        });
        socket.once('error', () => {
          failed++;
          resolve();
        });
      });
    }),
  );
  console.log(`  ${connected} connected, ${failed} failed, in ${((performance.now() - started) / 1000).toFixed(2)} s`);
  await sample('flood held');
  await pause(5000);
  await sample('flood held 5 s');
  for (const socket of floodSockets) socket.destroy();
  await pause(1000);
  await sample('after the flood');

  console.log(`HTTP/2 rapid reset: ${resets} streams opened and cancelled on one session`);
  const session = http2.connect(`https://127.0.0.1:${system.httpsPort}`, { ca: readFileSync(system.devCaFile), servername: TUNNEL_HOST });
  let goaway: string | undefined;
  session.on('goaway', (code) => (goaway = `GOAWAY ${code}`));
  session.on('error', (error) => (goaway ??= `session error ${error.message}`));
  await new Promise<void>((resolve, reject) => {
    session.once('connect', () => resolve());
    session.once('error', reject);
  });
  const resetStarted = performance.now();
  let opened = 0;
  for (; opened < resets && !session.destroyed && !session.closed && goaway === undefined; opened++) {
    const stream = session.request({ ':path': '/small', ':authority': `${TUNNEL_HOST}:${system.httpsPort}` });
    stream.on('error', () => undefined);
    stream.close(http2.constants.NGHTTP2_CANCEL);
    if (opened % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
  }
  const resetS = (performance.now() - resetStarted) / 1000;
  await pause(500);
  console.log(
    `  ${opened} streams cancelled in ${resetS.toFixed(2)} s; session: ${goaway ?? (session.destroyed ? 'destroyed' : 'still open')}`,
  );
  await sample('after the resets');
  session.destroy();
  await system.edgeMemory();
  await sample('after GC');
} finally {
  await system.close();
}
