import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

/** A real local service for the agent to forward to. */
export interface TestOrigin {
  port: number;
  url: string;
  /** Requests seen, in order (method, url, headers). */
  seen: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; rawHeaders: string[] }>;
  /** Resolvers for SSE tests: the origin waits for the test before each event. */
  sse: { next(): void; connected: Promise<void> };
  /** Live body activity of `/pattern` and `/upload` (the latest request of each), and requests in flight. */
  activity: OriginActivity;
  close(): Promise<void>;
}

/**
 * Events: 'sent' (bytes) after each `/pattern` write, 'blocked' (bytes) when such a write
 * returned false, 'drain' (bytes) when it may write again, 'received' (bytes) per `/upload`
 * chunk, 'idle' when the last HTTP request in flight has closed, 'websocket' (the origin's
 * `ws` WebSocket) for each accepted `/ws` connection.
 */
export interface OriginActivity extends EventEmitter {
  /** Bytes of the latest `/pattern` body handed to the socket. */
  sent: number;
  /** Whether the latest `/pattern` body waits for 'drain'. */
  blocked: boolean;
  /** Bytes of the latest `/upload` body received so far. */
  received: number;
  /** HTTP requests whose response has not closed yet (upgrades not counted). */
  inFlight: number;
}

/** Bytes per chunk of the `/pattern` stream. */
export const PATTERN_CHUNK_BYTES = 64 * 1024;
let patternBase: Buffer | undefined;

/**
 * Chunk `index` of the `/pattern` stream: one fixed 64 KiB block stamped with its index, cheap
 * enough for gigabytes (patternBlock costs a hash per 32 bytes), and loss, duplication or
 * reordering still changes the sha256. Returns a fresh buffer the caller may hand to a socket.
 */
export function patternChunk(index: number): Buffer {
  patternBase ??= Buffer.concat(Array.from({ length: PATTERN_CHUNK_BYTES / 32 }, (_, i) => patternBlock(i)));
  const chunk = Buffer.allocUnsafe(PATTERN_CHUNK_BYTES);
  patternBase.copy(chunk);
  chunk.writeUInt32BE(index, 0);
  return chunk;
}

/** sha256 (hex) of the first `length` bytes of the `/pattern` stream. */
export function patternSha256(length: number): string {
  const hash = createHash('sha256');
  for (let index = 0, left = length; left > 0; index++, left -= PATTERN_CHUNK_BYTES) {
    const chunk = patternChunk(index);
    hash.update(left < chunk.length ? chunk.subarray(0, left) : chunk);
  }
  return hash.digest('hex');
}

/** Deterministic byte stream: block i is sha256(seed:i), so both ends can hash without storing. */
export function patternBlock(index: number): Buffer {
  return createHash('sha256').update(`svc-e2e:${index}`).digest();
}

/**
 * Starts an origin on 127.0.0.1:0 with the routes the e2e tests use:
 * - `/echo`: JSON of method, url, headers and the sha256 + length of the body;
 * - `/bytes?n=N`: N bytes of a deterministic pattern, streamed with backpressure;
 * - `/pattern?n=N`: N bytes of the fast pattern (patternChunk), with backpressure, reported in `activity`;
 * - `/upload`: consumes the body, answers its sha256 and length; activity in `activity.received`;
 * - `/hang`: never answers (until the client goes away); with `?head=1` it sends the head, never the body;
 * - `/sse`: server-sent events, one per `sse.next()` call, then ends after `?count=` events;
 * - `/status/<code>`: that status with a short body;
 * - `/ws`: WebSocket echo (`ws` library); any other upgrade gets 426.
 */
export async function startOrigin(): Promise<TestOrigin> {
  const seen: TestOrigin['seen'] = [];
  let releaseEvent: (() => void) | undefined;
  let markConnected: () => void = () => undefined;
  const connected = new Promise<void>((resolve) => (markConnected = resolve));
  const pendingNext: number[] = [];
  const activity = Object.assign(new EventEmitter(), { sent: 0, blocked: false, received: 0, inFlight: 0 });
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawHeaders: req.rawHeaders });
    activity.inFlight++;
    res.once('close', () => {
      if (--activity.inFlight === 0) activity.emit('idle');
    });
    const url = new URL(req.url ?? '/', 'http://origin');
    if (url.pathname === '/trailers') {
      // A chunked body and a trailer section: a checksum, and the request's x-request-sum trailer echoed.
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/plain', trailer: 'x-checksum, x-echo' });
        res.write('body');
        res.addTrailers({ 'x-checksum': 'sha256-abc', 'x-echo': String(req.trailers['x-request-sum'] ?? 'none') });
        res.end();
      });
      return;
    }
    if (url.pathname === '/echo' || url.pathname === '/upload') {
      const hash = createHash('sha256');
      let length = 0;
      const upload = url.pathname === '/upload';
      if (upload) activity.received = 0;
      req.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        length += chunk.length;
        if (upload) {
          activity.received = length;
          activity.emit('received', length);
        }
      });
      req.on('end', () => {
        const body = JSON.stringify({
          method: req.method,
          url: req.url,
          headers: req.headers,
          rawHeaders: req.rawHeaders,
          bodySha256: hash.digest('hex'),
          bodyLength: length,
        });
        res.writeHead(200, { 'content-type': 'application/json', 'x-origin': 'yes', 'set-cookie': ['a=1', 'b=2'] });
        res.end(body);
      });
      return;
    }
    if (url.pathname === '/bytes') {
      const total = Number(url.searchParams.get('n') ?? '0');
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
      let sent = 0;
      let block = 0;
      const pump = (): void => {
        while (sent < total) {
          const chunk = Buffer.concat(Array.from({ length: 2048 }, () => patternBlock(block++)));
          const piece = chunk.subarray(0, Math.min(chunk.length, total - sent));
          sent += piece.length;
          if (!res.write(piece)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
      return;
    }
    if (url.pathname === '/pattern') {
      const total = Number(url.searchParams.get('n') ?? '0');
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
      activity.sent = 0;
      activity.blocked = false;
      let sent = 0;
      let index = 0;
      let waiting = false;
      const pump = (): void => {
        if (waiting) {
          waiting = false;
          activity.blocked = false;
          activity.emit('drain', sent);
        }
        while (sent < total && !res.destroyed) {
          const chunk = patternChunk(index++);
          const piece = total - sent < chunk.length ? chunk.subarray(0, total - sent) : chunk;
          sent += piece.length;
          activity.sent = sent;
          const more = res.write(piece);
          activity.emit('sent', sent);
          if (!more) {
            waiting = true;
            activity.blocked = true;
            activity.emit('blocked', sent);
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
      return;
    }
    if (url.pathname === '/hang') {
      // `?head=1`: the response head goes out, the body never comes.
      if (url.searchParams.has('head')) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.flushHeaders();
      }
      return;
    }
    if (url.pathname === '/sse') {
      const count = Number(url.searchParams.get('count') ?? '3');
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      let sent = 0;
      const send = (): void => {
        res.write(`data: event ${sent}\n\n`);
        sent++;
        if (sent >= count) res.end();
      };
      releaseEvent = send;
      markConnected();
      while (pendingNext.length > 0 && sent < count) {
        pendingNext.pop();
        send();
      }
      return;
    }
    const status = url.pathname.match(/^\/status\/(\d{3})$/);
    if (status) {
      res.writeHead(Number(status[1]), { 'content-type': 'text/plain' });
      res.end(`status ${status[1]}`);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('hello from origin');
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
      socket.end('HTTP/1.1 426 Upgrade Required\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
      activity.emit('websocket', ws);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    seen,
    sse: {
      next() {
        if (releaseEvent) releaseEvent();
        else pendingNext.push(1);
      },
      connected,
    },
    activity,
    async close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
