import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, test } from 'node:test';
import { offlinePage } from '../pages.js';
import type { LeanRequest } from './request-head.js';
import { visitorResponseHead } from './response-head.js';
import { VisitorConnection, type LeanHandler } from './visitor-connection.js';

interface Served {
  request: LeanRequest;
  connection: VisitorConnection;
}

/**
 * A listener whose connections start lean, as the edge's do. `serve` decides per request:
 * true once it has answered or will answer, false to leave the request to `node` (a real HTTP
 * server that never listens, like the edge's).
 */
async function leanServer(serve: (served: Served) => boolean, options: { maxHeadBytes?: number; keepAliveMs?: number } = {}) {
  const node = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => res.end(`node ${req.method} ${req.url} ${Buffer.concat(chunks).toString()}`));
  });
  const sockets: net.Socket[] = [];
  const accepted: Array<(socket: net.Socket) => void> = [];
  const handler: LeanHandler = { serveLean: (connection, request) => serve({ connection, request }) };
  const server = net.createServer((socket) => {
    sockets.push(socket);
    accepted.shift()?.(socket);
    new VisitorConnection(socket, {
      secure: false,
      maxHeadBytes: options.maxHeadBytes ?? 32 * 1024,
      keepAliveMs: options.keepAliveMs ?? 60_000,
      handler,
      handOver: (taken) => node.emit('connection', taken),
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    node.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  /** Resolves with the server side of the next connection accepted. */
  const nextSocket = (): Promise<net.Socket> => new Promise((resolve) => accepted.push(resolve));
  return { port, sockets, nextSocket };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Answers with a fixed-length body. */
function answer({ connection, request }: Served, body: string): void {
  connection.adopt({ onVisitorDrain: () => undefined, onVisitorGone: () => undefined });
  connection.startBody(visitorResponseHead(200, ['content-length', String(body.length)], request.method, connection.keepAlive)!);
  connection.writeBody(Buffer.from(body));
  connection.endBody();
}

/** A raw visitor connection that collects what the server sends. */
function rawClient(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  cleanups.push(async () => void socket.destroy());
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  return {
    socket,
    get received(): string {
      return received;
    },
    /** Resolves once `done` holds for what has arrived, or the connection has closed. */
    async until(done: (text: string) => boolean): Promise<string> {
      while (!done(received) && !socket.destroyed) await Promise.race([once(socket, 'data'), once(socket, 'close')]);
      return received;
    },
  };
}

/** Connects, writes `text`, and collects what comes back until `until` says enough or the socket closes. */
async function exchange(port: number, text: string, until: (received: string) => boolean) {
  const client = rawClient(port);
  client.socket.write(text);
  return { received: await client.until(until), socket: client.socket };
}

const count = (text: string, pattern: RegExp): number => text.match(pattern)?.length ?? 0;

test('answers pipelined requests in order, the later ones waiting for the earlier', async () => {
  const pending: Served[] = [];
  const { port } = await leanServer((served) => {
    if (served.request.target === '/slow') setImmediate(() => answer(served, 'slow body'));
    else answer(served, `fast ${served.request.target}`);
    pending.push(served);
    return true;
  });
  const text = 'GET /slow HTTP/1.1\r\nHost: a\r\n\r\nGET /two HTTP/1.1\r\nHost: a\r\n\r\nGET /three HTTP/1.1\r\nHost: a\r\n\r\n';
  const { received } = await exchange(port, text, (got) => got.includes('fast /three'));
  assert.deepEqual(
    [...received.matchAll(/\r\n\r\n(slow body|fast \/two|fast \/three)/g)].map((m) => m[1]),
    ['slow body', 'fast /two', 'fast /three'],
  );
  assert.equal(pending.length, 3);
});

test("hands the connection to Node's server at a request boundary, unread bytes and all", async () => {
  const { port } = await leanServer((served) => {
    answer(served, 'lean');
    return true;
  });
  const text =
    'GET /first HTTP/1.1\r\nHost: a\r\n\r\nPOST /second HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloGET /third HTTP/1.1\r\nHost: a\r\n\r\n';
  const { received } = await exchange(port, text, (got) => got.includes('node GET /third'));
  assert.equal(count(received, /HTTP\/1\.1 200 OK/g), 3);
  assert.ok(received.indexOf('lean') < received.indexOf('node POST /second hello'));
  assert.ok(received.includes('node GET /third'), 'once handed over, the connection stays with Node');
});

test('a request the handler declines goes to Node whole', async () => {
  const { port } = await leanServer(() => false);
  const { received } = await exchange(port, 'GET /apex HTTP/1.1\r\nHost: a\r\n\r\n', (got) => got.includes('node GET /apex'));
  assert.match(received, /^HTTP\/1\.1 200 OK/);
});

test('a head trickled in pieces is finished by Node', async () => {
  let servedLean = false;
  const { port, nextSocket } = await leanServer(() => (servedLean = true));
  const serverSide = nextSocket();
  const client = rawClient(port);
  client.socket.write('GET /tr');
  // The first piece is read (and handed over) before the rest is sent.
  await once(await serverSide, 'data');
  client.socket.write('ickle HTTP/1.1\r\nHo');
  client.socket.write('st: a\r\n\r\n');
  assert.match(await client.until((got) => got.includes('node GET /trickle')), /node GET \/trickle/);
  assert.equal(servedLean, false);
});

test('pauses the visitor once more than a head waits behind a request, and serves it all afterwards', async () => {
  let held!: (served: Served) => void;
  const holding = new Promise<Served>((resolve) => (held = resolve));
  const { port, sockets } = await leanServer(
    (served) => {
      if (served.request.target === '/hold') held(served);
      else answer(served, 'ok');
      return true;
    },
    { maxHeadBytes: 1024 },
  );
  const client = rawClient(port);
  client.socket.write('GET /hold HTTP/1.1\r\nHost: a\r\n\r\n');
  const first = await holding;
  const paused = once(sockets[0]!, 'pause');
  const queued = Array.from({ length: 60 }, (_, i) => `GET /q${i} HTTP/1.1\r\nHost: a\r\n\r\n`).join('');
  client.socket.write(queued);
  await paused;
  answer(first, 'held');
  const received = await client.until((got) => count(got, /HTTP\/1\.1 200 OK/g) >= 61);
  assert.equal(count(received, /HTTP\/1\.1 200 OK/g), 61);
  assert.ok(received.indexOf('held') < received.lastIndexOf('ok'));
});

test('frames a body without a length as chunks, and ends it with the zero chunk', async () => {
  const { port } = await leanServer(({ connection, request }) => {
    connection.adopt({ onVisitorDrain: () => undefined, onVisitorGone: () => undefined });
    connection.startBody(visitorResponseHead(200, ['content-type', 'text/plain'], request.method, true)!);
    connection.writeBody(Buffer.from('first,'));
    connection.writeBody(Buffer.alloc(20_000, 'x'));
    connection.endBody();
    return true;
  });
  const response = await new Promise<http.IncomingMessage>((resolve) => http.get({ port, host: '127.0.0.1', path: '/' }, resolve));
  assert.equal(response.headers['transfer-encoding'], 'chunked');
  let body = '';
  for await (const chunk of response) body += chunk;
  assert.equal(body, `first,${'x'.repeat(20_000)}`);
});

test('ends a chunked body with its trailer section; a Content-Length body drops trailers', async () => {
  const { port } = await leanServer(({ connection, request }) => {
    connection.adopt({ onVisitorDrain: () => undefined, onVisitorGone: () => undefined });
    const headers = request.target === '/length' ? ['content-length', '2'] : ['trailer', 'x-checksum'];
    connection.startBody(visitorResponseHead(200, headers, request.method, true)!);
    connection.writeBody(Buffer.from('ok'));
    connection.endBody(['x-checksum', 'abc', 'grpc-status', '0']);
    return true;
  });
  const chunked = await new Promise<http.IncomingMessage>((resolve) => http.get({ port, host: '127.0.0.1', path: '/' }, resolve));
  let body = '';
  for await (const chunk of chunked) body += chunk;
  assert.equal(body, 'ok');
  assert.deepEqual(chunked.trailers, { 'x-checksum': 'abc', 'grpc-status': '0' });
  const length = await new Promise<http.IncomingMessage>((resolve) => http.get({ port, host: '127.0.0.1', path: '/length' }, resolve));
  length.resume();
  await new Promise((resolve) => length.on('end', resolve));
  assert.deepEqual(length.trailers, {});
});

test('a body longer than its Content-Length is cut there and the connection closed; a shorter one closes it', async () => {
  const { port } = await leanServer(({ connection, request }) => {
    connection.adopt({ onVisitorDrain: () => undefined, onVisitorGone: () => undefined });
    connection.startBody(visitorResponseHead(200, ['content-length', '4'], request.method, true)!);
    connection.writeBody(Buffer.from(request.target === '/long' ? 'abcdefgh' : 'ab'));
    connection.endBody();
    return true;
  });
  const long = await exchange(port, 'GET /long HTTP/1.1\r\nHost: a\r\n\r\nGET /next HTTP/1.1\r\nHost: a\r\n\r\n', () => false);
  assert.ok(long.received.endsWith('\r\n\r\nabcd'), 'nothing after the announced length, and no second response');
  const short = await exchange(port, 'GET /short HTTP/1.1\r\nHost: a\r\n\r\n', () => false);
  assert.ok(short.received.endsWith('\r\n\r\nab'), 'the visitor sees a truncated body and a closed connection');
});

test('Connection: close is honoured after the answer; an idle keep-alive connection closes after keepAliveMs', async () => {
  const { port } = await leanServer(
    (served) => {
      answer(served, 'bye');
      return true;
    },
    { keepAliveMs: 50 },
  );
  const closing = await exchange(
    port,
    'GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET /ignored HTTP/1.1\r\nHost: a\r\n\r\n',
    () => false,
  );
  assert.equal(count(closing.received, /HTTP\/1\.1 200 OK/g), 1);
  assert.match(closing.received, /\r\nconnection: close\r\n/);
  const idle = await exchange(port, 'GET / HTTP/1.1\r\nHost: a\r\n\r\n', () => false);
  assert.equal(count(idle.received, /HTTP\/1\.1 200 OK/g), 1, 'answered, then closed by the idle timer');
});

test('pages are whole responses and keep the connection; a visitor leaving mid-response is reported', async () => {
  let gone!: () => void;
  const visitorGone = new Promise<void>((resolve) => (gone = resolve));
  const { port } = await leanServer(({ connection, request }) => {
    if (request.target === '/page') {
      connection.sendPage(offlinePage('x.example.com'));
      return true;
    }
    connection.adopt({ onVisitorDrain: () => undefined, onVisitorGone: gone });
    connection.startBody(visitorResponseHead(200, [], request.method, true)!);
    connection.writeBody(Buffer.from('partial'));
    return true;
  });
  const { received, socket } = await exchange(port, 'GET /page HTTP/1.1\r\nHost: a\r\n\r\nGET /stream HTTP/1.1\r\nHost: a\r\n\r\n', (got) =>
    got.includes('partial'),
  );
  assert.match(received, /^HTTP\/1\.1 404 Not Found\r\n/);
  socket.destroy();
  await visitorGone;
});

test('a slow answer is not idleness: the keep-alive timer firing mid-request leaves the connection be', async () => {
  let held!: (served: Served) => void;
  const holding = new Promise<Served>((resolve) => (held = resolve));
  const { port, nextSocket } = await leanServer(
    (served) => {
      held(served);
      return true;
    },
    { keepAliveMs: 50 },
  );
  const serverSide = nextSocket();
  const client = rawClient(port);
  client.socket.write('GET /slow HTTP/1.1\r\nHost: a\r\n\r\n');
  const served = await holding;
  await once(await serverSide, 'timeout');
  answer(served, 'late but whole');
  assert.match(await client.until((got) => got.includes('late but whole')), /late but whole/);
  // Idle again, the connection now closes after keepAliveMs.
  if (!client.socket.destroyed) await once(client.socket, 'close');
});

test('bytes that queued while the visitor was paused are read after those held before them, never before', async () => {
  let held!: (served: Served) => void;
  const holding = new Promise<Served>((resolve) => (held = resolve));
  const served: string[] = [];
  const { port, sockets } = await leanServer(
    (request) => {
      served.push(request.request.target);
      if (request.request.target === '/hold') held(request);
      else answer(request, 'lean');
      return true;
    },
    { maxHeadBytes: 1024 },
  );
  const client = rawClient(port);
  client.socket.write('GET /hold HTTP/1.1\r\nHost: a\r\n\r\n');
  const first = await holding;
  // A body larger than a head waits behind the held request: the visitor is paused.
  const smuggled = 'GET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n';
  const body = 'a'.repeat(2000) + smuggled + 'b'.repeat(100);
  const paused = once(sockets[0]!, 'pause');
  client.socket.write(`POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 2000)}`);
  await paused;
  // The rest of the body, which reads like a request, arrives while paused and waits in the socket.
  client.socket.write(body.slice(2000));
  // No event says bytes were buffered while paused: look once per loop turn until they are.
  while (sockets[0]!.readableLength < body.length - 2000) await new Promise((resolve) => setImmediate(resolve));
  answer(first, 'held');
  // Whatever comes first: Node's answer to the upload, a lean answer, or Node refusing a request.
  const received = await client.until((got) => /node |lean| 400 /.test(got));
  assert.deepEqual(served, ['/hold']);
  assert.ok(received.includes(`node POST /upload ${body}`), received.slice(0, 300));
});
