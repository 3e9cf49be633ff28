// An origin for the HTTP-semantics tests (early answers, Expect, 1xx): each route answers the
// way a real service would, and the origin counts the bytes its sockets received, so a test can
// tell whether a body it refused was sent anyway. Also the suite those tests run on.
import { once } from 'node:events';
import http from 'node:http';
import type http2 from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { after, before } from 'node:test';
import { connectH2 } from './data-path-support.js';
import { serverSuite, startAgent, type TestAgent, type TestServer } from './index.js';

export const LINK_HINT = '</style.css>; rel=preload; as=style';

export interface SemanticsOrigin {
  port: number;
  /** Bytes received on every socket so far, request heads included. */
  readonly received: number;
  /** Request heads seen, in order (method, path and the Expect header, if any). */
  readonly requests: Array<{ method: string; path: string; expect: string | undefined }>;
  close(): Promise<void>;
}

/**
 * Routes:
 * - `/early`: 200 `early\n` at once, the body unread (the connection stays keep-alive).
 * - `/too-large`: 413 `too large\n` with `Connection: close`, the body unread.
 * - `/expect/refuse`, `/expect/too-large`: `checkContinue` answers 417 / 413, never 100.
 * - `/expect/accept` (and any other path with `Expect`): 100 Continue, then reads the body and
 *   answers 200 with its length.
 * - `/hints`: 103 Early Hints with a Link, then 200 `hinted\n`.
 * - anything else: 200 with the length of the body it read.
 */
export async function startSemanticsOrigin(): Promise<SemanticsOrigin> {
  let received = 0;
  const requests: SemanticsOrigin['requests'] = [];
  const sockets = new Set<Socket>();
  const readAll = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    let length = 0;
    req.on('data', (chunk: Buffer) => (length += chunk.length));
    req.on('end', () => {
      const body = `read ${length}\n`;
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  };
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '', expect: req.headers.expect });
    switch (req.url) {
      case '/early':
        res.writeHead(200, { 'content-length': 6 });
        res.end('early\n');
        return;
      case '/too-large':
        res.writeHead(413, { connection: 'close' });
        res.end('too large\n');
        return;
      case '/hints':
        res.writeEarlyHints({ link: LINK_HINT });
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 7 });
        res.end('hinted\n');
        return;
      default:
        readAll(req, res);
    }
  });
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '', expect: req.headers.expect });
    if (req.url === '/expect/refuse' || req.url === '/expect/too-large') {
      const status = req.url === '/expect/refuse' ? 417 : 413;
      res.writeHead(status, { 'content-type': 'text/plain', 'content-length': 8 });
      res.end('refused\n');
      return;
    }
    res.writeContinue();
    readAll(req, res);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    get received() {
      return received;
    },
    requests,
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** A server, the semantics origin and an agent forwarding to it. */
export interface SemanticsSystem {
  server: TestServer;
  origin: SemanticsOrigin;
  agent: TestAgent;
}

/**
 * Call in a describe() body: starts a server, the semantics origin and an agent forwarding to it
 * before the suite's tests and stops them after. The returned object is filled in by then.
 */
export function semanticsSuite(): SemanticsSystem {
  // The server suite's own origin stays unused; this suite's origin is the semantics one.
  const base = serverSuite();
  const system = {} as Partial<SemanticsSystem>;
  before(async () => {
    system.server = base.server;
    system.origin = await startSemanticsOrigin();
    system.agent = await startAgent(base.server, { token: base.server.token, target: system.origin.port });
  });
  after(async () => {
    await system.agent?.close();
    await system.origin?.close();
  });
  return system as SemanticsSystem;
}

/** Call in a describe() body: one HTTP/2 session to the agent's hostname for the suite's tests, closed after. */
export function h2VisitorSuite(system: SemanticsSystem): { session: http2.ClientHttp2Session } {
  const visitor = {} as { session: http2.ClientHttp2Session };
  before(async () => {
    visitor.session = await connectH2(system.server, system.agent.hostname);
  });
  after(() => visitor.session?.close());
  return visitor;
}
