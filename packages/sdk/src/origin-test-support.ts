/**
 * Test-only helpers for OriginProxy: an edge-side Mux wired to a proxy over loopback TCP,
 * a visitor that sends one request through it, and origins (node:http and scripted raw
 * sockets) that count their connections. Not exported from index.ts.
 */
import { createHash } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { afterEach } from 'node:test';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Mux, StreamResetError, streamDuplex, type StreamDuplex, type RequestHead, type ResponseHead } from '@svcrouter/protocol';
import { hostRewrite } from './host-header.js';
import { parseLocalTarget, type LocalTarget, type OriginProto } from './local-target.js';
import { OriginProxy, type RequestLog } from './origin-proxy.js';

/** The edge's end of a session whose agent end forwards every stream to `proxy`. */
export interface ProxyFixture {
  edge: Mux;
  proxy: OriginProxy;
  logs: RequestLog[];
  /** Resolves with the next request log line (or one already written and not yet taken). */
  nextLog(): Promise<RequestLog>;
  close(): Promise<void>;
}

/**
 * Connects an edge Mux to an agent Mux that hands its streams to a new OriginProxy for `origin`
 * (an address as `svc http` takes it; `proto` as its --proto, `hostHeader` as its --host-header).
 * Both ends understand TRAILERS unless `peerTrailers` is false (an older peer).
 */
export async function proxyFixture(
  origin: string,
  options: { proto?: OriginProto; peerTrailers?: boolean; hostHeader?: string } = {},
): Promise<ProxyFixture> {
  const peerTrailers = options.peerTrailers ?? true;
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const accepted = once(server, 'connection') as Promise<[net.Socket]>;
  const dialerSocket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  const [[acceptorSocket]] = await Promise.all([accepted, once(dialerSocket, 'connect')]);
  const logs: RequestLog[] = [];
  const logged = new EventEmitter();
  let taken = 0;
  const target = parseLocalTarget(origin, options.proto) as LocalTarget;
  const onLog = (log: RequestLog): void => {
    logs.push(log);
    logged.emit('log');
  };
  const proxy = new OriginProxy(target, onLog, hostRewrite(options.hostHeader, target));
  new Mux(dialerSocket, {
    role: 'dialer',
    peerTrailers,
    onStream: (stream) => proxy.handle(stream),
  });
  const edge = new Mux(acceptorSocket, { role: 'acceptor', peerTrailers });
  return {
    edge,
    proxy,
    logs,
    async nextLog() {
      while (logs.length <= taken) await once(logged, 'log');
      return logs[taken++]!;
    },
    async close() {
      await proxy.close();
      edge.destroy();
      dialerSocket.destroy();
      acceptorSocket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What a visitor got back for one request. */
export interface VisitorResult {
  status: number;
  headers: string[];
  body: Buffer;
  /** The TRAILERS payload that ended the answer, if one did. */
  trailers: unknown;
  /** The reset code when the agent reset the stream instead of completing it. */
  resetCode: string | undefined;
}

/** A request as the edge would send it; Host is added. */
export interface VisitorRequest {
  method?: string;
  path?: string;
  headers?: string[];
  /** A body to upload; its Content-Length is sent only if `headers` carries one. */
  body?: Buffer;
}

/** Opens a stream for the request on the edge; the caller reads the answer. */
export function openRequest(edge: Mux, request: VisitorRequest = {}): StreamDuplex {
  const head: RequestHead = {
    m: request.method ?? 'GET',
    p: request.path ?? '/',
    h: ['Host', 'origin.test', ...(request.headers ?? [])],
    t: 'tun_test',
  };
  if (request.body) head.b = 1;
  const stream = streamDuplex(edge.open(head, undefined, !request.body));
  if (request.body) void writeInPieces(stream, request.body);
  return stream;
}

/** Sends one request through the fixture and collects the whole answer. */
export function visit(fixture: ProxyFixture, request: VisitorRequest = {}): Promise<VisitorResult> {
  return collectAnswer(openRequest(fixture.edge, request));
}

/** Reads the response head and body from a stream, or the reset that cut them short. */
export function collectAnswer(stream: StreamDuplex): Promise<VisitorResult> {
  return new Promise((resolve) => {
    const result: VisitorResult = { status: 0, headers: [], body: Buffer.alloc(0), trailers: undefined, resetCode: undefined };
    const chunks: Buffer[] = [];
    stream.on('headers', (head: ResponseHead) => {
      result.status = head.s;
      result.headers = head.h;
    });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      result.body = Buffer.concat(chunks);
      result.trailers = stream.trailers;
      resolve(result);
    });
    stream.on('error', (error) => {
      result.resetCode = error instanceof StreamResetError ? error.code : String(error);
    });
    // A reset of our own closes the stream without an error.
    stream.on('close', () => {
      result.body = Buffer.concat(chunks);
      resolve(result);
    });
  });
}

/** Writes `data` in 64 KiB pieces honouring backpressure, then ends the stream. */
export async function writeInPieces(stream: StreamDuplex, data: Buffer): Promise<void> {
  for (let offset = 0; offset < data.length; offset += 64 * 1024) {
    if (stream.destroyed) return;
    if (!stream.write(data.subarray(offset, offset + 64 * 1024))) await once(stream, 'drain').catch(() => undefined);
  }
  if (!stream.destroyed) stream.end();
}

/** A listening origin: its URL, the sockets it accepted, and a close that waits for it. */
export interface TestOrigin {
  url: string;
  port: number;
  connections: net.Socket[];
  close(): Promise<void>;
}

/** A request handler of a test origin, plain or async. */
export type OriginHandler = (req: http.IncomingMessage, res: http.ServerResponse) => unknown;

/**
 * A node:http origin that counts its connections. An async handler that rejects destroys its
 * response, so the visitor's side of the test sees the failure instead of an unhandled rejection.
 */
export async function httpOrigin(handler: OriginHandler): Promise<TestOrigin & { server: http.Server }> {
  const server = http.createServer((req, res) => {
    const handled = handler(req, res);
    if (handled instanceof Promise)
      handled.catch((error: unknown) => res.destroy(error instanceof Error ? error : new Error(String(error))));
  });
  const connections: net.Socket[] = [];
  server.on('connection', (socket: net.Socket) => connections.push(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    port,
    connections,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A TCP origin that hands each accepted socket to `onSocket`. */
export async function tcpOrigin(onSocket: (socket: net.Socket, connection: number) => void): Promise<TestOrigin> {
  const connections: net.Socket[] = [];
  const server = net.createServer((socket) => {
    socket.on('error', () => undefined);
    onSocket(socket, connections.push(socket) - 1);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    connections,
    async close() {
      for (const socket of connections) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A self-signed key and certificate for localhost, made with openssl; undefined without it. */
export async function selfSignedCertificate(): Promise<{ key: Buffer; cert: Buffer } | undefined> {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-origin-tls-'));
  try {
    const [keyPath, certPath] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-subj',
      '/CN=localhost',
      '-days',
      '1',
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ]);
    return { key: await readFile(keyPath), cert: await readFile(certPath) };
  } catch {
    return undefined;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A node:https origin with the given certificate, counting its TLS connections. */
export async function httpsOrigin(credentials: { key: Buffer; cert: Buffer }, handler: http.RequestListener): Promise<TestOrigin> {
  const server = https.createServer(credentials, handler);
  const connections: net.Socket[] = [];
  server.on('secureConnection', (socket: net.Socket) => connections.push(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `https://localhost:${port}`,
    port,
    connections,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A raw TCP origin for answers node:http would never send. `onRequest` runs for each request
 * head (bodies are not read) with its socket and the request's index on that connection.
 */
export function rawOrigin(onRequest: (socket: net.Socket, head: string, index: number, connection: number) => void): Promise<TestOrigin> {
  return tcpOrigin((socket, connection) => {
    let buffered = '';
    let index = 0;
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      for (let end = buffered.indexOf('\r\n\r\n'); end >= 0; end = buffered.indexOf('\r\n\r\n')) {
        const head = buffered.slice(0, end);
        buffered = buffered.slice(end + 4);
        onRequest(socket, head, index++, connection);
      }
    });
  });
}

/** A port on loopback where nothing listens (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Hex sha256. */
export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Per-suite origin + proxy setup with cleanup after each test: call in a describe() body,
 * then `await setup(origin)` in each test.
 */
export function originSetup(): <T extends TestOrigin>(origin: T) => Promise<{ origin: T; fixture: ProxyFixture }> {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return async (origin) => {
    cleanups.push(() => origin.close());
    const fixture = await proxyFixture(origin.url);
    cleanups.push(() => fixture.close());
    return { origin, fixture };
  };
}
