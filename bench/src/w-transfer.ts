import http from 'node:http';
import https from 'node:https';
import { checkUpload, pumpBody } from './body-pump.js';
import type { Sizes } from './options.js';
import { cpuSeconds } from './proc.js';
import { matchedPairs, median, summarise } from './stats.js';
import { TUNNEL_HOST, type BenchSystem } from './system.js';

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/** One bulk transfer. */
interface TransferRun {
  seconds: number;
  mibPerS: number;
  /** Edge + agent CPU seconds (tunnel runs only; 0 for direct). */
  cpuS: number;
}

export interface TransferResult {
  bytes: number;
  mibPerS: { direct: number; tunnel: number; ratio: number };
  /** Median CPU seconds of edge + agent per GiB moved through the tunnel. */
  cpuSPerGiB: number;
}

/** Downloads `bytes` from /bytes, streaming (nothing kept); resolves with the seconds taken. */
export function download(port: number, bytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.get({ host: '127.0.0.1', port, path: `/bytes?n=${bytes}`, headers: { host: TUNNEL_HOST }, agent: false }, (res) => {
      let received = 0;
      res.on('data', (chunk: Buffer) => (received += chunk.length));
      res.on('end', () => {
        if (res.statusCode !== 200 || received !== bytes) reject(new Error(`download got ${res.statusCode}, ${received}/${bytes} bytes`));
        else resolve((performance.now() - started) / 1000);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/**
 * Uploads `bytes` to /upload over HTTP/1.1 with backpressure; resolves once the origin confirmed
 * the length. `secure`: over TLS (https, the certificate unchecked: loopback, under the
 * benchmark's control), to set beside the HTTP/2 upload on equal terms.
 */
export function upload(port: number, bytes: number, secure = false): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const options: https.RequestOptions = {
      host: '127.0.0.1',
      port,
      method: 'PUT',
      path: '/upload',
      headers: { host: TUNNEL_HOST, 'content-length': String(bytes) },
      agent: false,
      ...(secure ? { servername: TUNNEL_HOST, rejectUnauthorized: false } : {}),
    };
    const onResponse = (res: http.IncomingMessage): void => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        const error = checkUpload(res.statusCode ?? 0, body, bytes);
        if (error) reject(error);
        else resolve((performance.now() - started) / 1000);
      });
    };
    const req = secure ? https.request(options, onResponse) : http.request(options, onResponse);
    req.on('error', reject);
    pumpBody(req, bytes);
  });
}

/** Download or upload `sizes.transferBytes`, direct and through the tunnel, in matched pairs after a warm-up of each side. */
export async function transfer(
  system: BenchSystem,
  direction: 'download' | 'upload',
  sizes: Sizes,
  log: (line: string) => void,
): Promise<TransferResult> {
  const bytes = sizes.transferBytes;
  const move = direction === 'download' ? download : upload;
  const pids = [system.server.pid, system.agent.pid];
  for (let i = 0; i < sizes.transferWarmups; i++) {
    for (const port of [system.originPort, system.httpPort]) await move(port, bytes);
  }
  if (sizes.transferWarmups > 0) log(`  ${direction} warm-up: ${sizes.transferWarmups} unrecorded transfer(s) per side`);
  const pairs = await matchedPairs<TransferRun>(sizes.transferRounds, async (side) => {
    const port = side === 'direct' ? system.originPort : system.httpPort;
    const cpu0 = side === 'tunnel' ? pids.reduce((s, pid) => s + cpuSeconds(pid), 0) : 0;
    const seconds = await move(port, bytes);
    const cpuS = side === 'tunnel' ? pids.reduce((s, pid) => s + cpuSeconds(pid), 0) - cpu0 : 0;
    const run = { seconds, mibPerS: bytes / MIB / seconds, cpuS };
    log(
      `  ${direction} ${side.padEnd(6)} ${run.mibPerS.toFixed(0)} MiB/s${side === 'tunnel' ? `  edge+agent CPU ${cpuS.toFixed(2)} s` : ''}`,
    );
    return run;
  });
  return {
    bytes,
    mibPerS: summarise(pairs, (r) => r.mibPerS),
    cpuSPerGiB: median(pairs.map((p) => p.tunnel.cpuS / (bytes / GIB))),
  };
}
