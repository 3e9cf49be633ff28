import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { Readable, Writable } from 'node:stream';
import { WebSocketServer } from 'ws';

/** Size of each chunk the download streams, bytes. */
const CHUNK_BYTES = 64 * 1024;

/** What the built-in service saw of the last transfer: size and sha256 of the bytes, hex. */
export interface Transfer {
  bytes: number;
  sha256: string;
}

/** The local service `svc doctor` tunnels to, on a free loopback port. */
export interface DoctorService {
  port: number;
  /** Served by /hello, so a check knows the answer came from here and not from something in between. */
  nonce: string;
  /** The sha256 of what /download sent last, once it has sent it all. */
  lastDownload: Transfer | undefined;
  close(): Promise<void>;
}

/**
 * `size` bytes of random data as a stream of CHUNK_BYTES chunks, hashed as they go: `done`
 * resolves with the size and sha256 of what was read. Never holds more than a chunk.
 */
export function randomStream(size: number): { stream: Readable; done: Promise<Transfer> } {
  const hash = createHash('sha256');
  let left = size;
  let finish!: (transfer: Transfer) => void;
  const done = new Promise<Transfer>((resolve) => (finish = resolve));
  const stream = new Readable({
    read() {
      if (left === 0) {
        finish({ bytes: size, sha256: hash.digest('hex') });
        this.push(null);
        return;
      }
      const chunk = randomBytes(Math.min(CHUNK_BYTES, left));
      left -= chunk.length;
      hash.update(chunk);
      this.push(chunk);
    },
  });
  return { stream, done };
}

/** A writable that hashes what it is given and keeps nothing; `done` resolves at its end. */
export function hashingSink(): { sink: Writable; done: Promise<Transfer> } {
  const hash = createHash('sha256');
  let bytes = 0;
  let finish!: (transfer: Transfer) => void;
  const done = new Promise<Transfer>((resolve) => (finish = resolve));
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      hash.update(chunk);
      callback();
    },
    final(callback) {
      finish({ bytes, sha256: hash.digest('hex') });
      callback();
    },
  });
  return { sink, done };
}

/**
 * Starts the built-in service: GET /hello (the nonce), GET /events (one server-sent event at
 * once, then the stream stays open), POST /upload (answers the size and sha256 of the body,
 * hashed as it streams), GET /download?bytes=N (N random bytes, streamed), and a WebSocket
 * echo on /ws.
 */
export async function startDoctorService(): Promise<DoctorService> {
  const nonce = randomBytes(12).toString('base64url');
  const service: DoctorService = { port: 0, nonce, lastDownload: undefined, close: async () => undefined };
  const server = http.createServer((request, response) => {
    void serve(service, request, response).catch(() => response.destroy());
  });
  const sockets = new WebSocketServer({ noServer: true });
  server.on('upgrade', (request, socket, head) => {
    if (request.url !== '/ws') return void socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\n\r\n');
    sockets.handleUpgrade(request, socket, head, (ws) => {
      ws.on('message', (data, binary) => ws.send(data, { binary }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  service.port = (server.address() as AddressInfo).port;
  service.close = () =>
    new Promise((resolve) => {
      for (const client of sockets.clients) client.terminate();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return service;
}

async function serve(service: DoctorService, request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://doctor');
  if (request.method === 'GET' && url.pathname === '/hello') {
    response.writeHead(200, { 'content-type': 'text/plain' }).end(service.nonce);
  } else if (request.method === 'GET' && url.pathname === '/events') {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    response.write(`data: ${service.nonce}\n\n`);
  } else if (request.method === 'POST' && url.pathname === '/upload') {
    const { sink, done } = hashingSink();
    await pipeline(request, sink);
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(await done));
  } else if (request.method === 'GET' && url.pathname === '/download') {
    const bytes = Number(url.searchParams.get('bytes'));
    if (!Number.isSafeInteger(bytes) || bytes < 0) return void response.writeHead(400).end('bytes=N');
    service.lastDownload = undefined;
    const { stream, done } = randomStream(bytes);
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes });
    await pipeline(stream, response);
    service.lastDownload = await done;
  } else {
    response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  }
}
