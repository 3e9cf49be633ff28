import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { pumpBody } from './body-pump.js';
import { epochMs } from './stats.js';

/** Body of the small-GET workload: exactly 100 bytes. */
export const SMALL_BODY = Buffer.alloc(100, 'a');
/** Chunk the download route writes, reused: the origin should cost as little as possible. */
const BULK_CHUNK = Buffer.alloc(64 * 1024, 'b');

/**
 * The local service of the benchmark. It runs in its own process (origin-main.ts) so its CPU
 * never competes with the load generator's event loop. Routes:
 * - `/small`: 100-byte body (W1);
 * - `/bytes?n=N`: N bytes, streamed with backpressure;
 * - `/upload`: consumes the body, answers its length;
 * - `/sse?count=C&interval=MS`: C events, the first at once and then one every MS ms, each
 *   carrying its send time (epoch ms) so the visitor can measure its delay;
 * - `/ws` (upgrade): WebSocket echo.
 */
export async function startOrigin(port = 0): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer(serveOrigin);
  server.keepAliveTimeout = 65_000;
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  server.on('upgrade', (req, socket, head) => {
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
    });
  });
  await new Promise<void>((resolve) => server.listen({ port, host: '127.0.0.1', backlog: 2048 }, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      for (const client of wss.clients) client.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The origin's routes, for HTTP/1.1 and (through the compatibility API) HTTP/2 alike. */
export function serveOrigin(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = req.url ?? '/';
  if (url === '/small') {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
    res.end(SMALL_BODY);
    return;
  }
  const parsed = new URL(url, 'http://origin');
  if (parsed.pathname === '/bytes') return sendBytes(res, Number(parsed.searchParams.get('n') ?? '0'));
  if (parsed.pathname === '/upload') {
    let length = 0;
    req.on('data', (chunk: Buffer) => (length += chunk.length));
    req.on('end', () => {
      const body = JSON.stringify({ length });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
      res.end(body);
    });
    return;
  }
  if (parsed.pathname === '/sse') {
    return sendEvents(res, Number(parsed.searchParams.get('count') ?? '10'), Number(parsed.searchParams.get('interval') ?? '50'));
  }
  res.writeHead(404, { 'content-type': 'text/plain', 'content-length': '9' });
  res.end('not found');
}

function sendBytes(res: http.ServerResponse, total: number): void {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
  pumpBody(res, total, BULK_CHUNK);
}

function sendEvents(res: http.ServerResponse, count: number, intervalMs: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const start = performance.now();
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  const send = (): void => {
    res.write(`data: {"i":${sent},"t":${epochMs()}}\n\n`);
    sent++;
    if (sent >= count) return void res.end();
    // Scheduled against the start, not the previous event, so delays do not accumulate.
    timer = setTimeout(send, Math.max(0, start + sent * intervalMs - performance.now()));
  };
  res.on('close', () => clearTimeout(timer));
  send();
}
