// Visitors that watch how a response ends (complete, or cut as its protocol says it), and an
// origin whose responses the test cuts when it likes: the helpers of cut-responses.test.ts.
import { once } from 'node:events';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import type { TestServer } from './index.js';
import { h2Session } from './h2-visitor.js';

/** The first body bytes every cut response sends before it is cut. */
export const FIRST = 'first-bytes;';

/** How one visitor saw its response end. */
export interface Ending {
  /** True when the visitor can tell the response is not complete. */
  cut: boolean;
  /** What it saw, for the assertion message. */
  detail: string;
}

/** A visitor in the middle of a response: `started` once the first body bytes arrived, `ended` once it is over. */
export interface Watched {
  started: Promise<void>;
  ended: Promise<Ending>;
}

/** How a visitor asks: its protocol, and whether the response it asks for has a Content-Length. */
export type VisitorKind = 'h1' | 'h1-post' | 'h1-length' | 'h1-post-length' | 'h2' | 'h2-length' | 'upgrade';

/** Every kind of visitor a cut is tried on: HTTP/1.1 (lean path and Node's server) chunked and with a length, HTTP/2, an upgrade. */
export const VISITORS: readonly VisitorKind[] = ['h1', 'h1-post', 'h1-length', 'h1-post-length', 'h2', 'h2-length', 'upgrade'];

/** The path a visitor of `kind` asks for: `length` in it makes the origin send a Content-Length. */
export function pathFor(kind: VisitorKind, key: string): string {
  if (kind === 'upgrade') return `/upgrade/${key}`;
  return kind.endsWith('length') ? `/length/${key}` : `/chunked/${key}`;
}

/** Starts a visitor of `kind` asking `hostname` for its path. */
export function watch(server: TestServer, hostname: string, kind: VisitorKind, key: string): Watched {
  const path = pathFor(kind, key);
  if (kind === 'h2' || kind === 'h2-length') return watchH2(server, hostname, path);
  if (kind === 'upgrade') {
    return watchRaw(server.httpPort, `GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: Upgrade\r\nUpgrade: cut-test\r\n\r\n`, true);
  }
  // A request with a body is served by Node's HTTP server; one without by the lean path.
  const request = kind.includes('post')
    ? `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi`
    : `GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`;
  return watchRaw(server.httpPort, request, false);
}

/**
 * An HTTP/1.1 visitor on its own connection (`Connection: close`, so a complete response ends
 * with the edge's close too). Cut: a chunked body without its last chunk, a body shorter than
 * its Content-Length, or (for an upgrade, which has no framing) a reset connection.
 */
function watchRaw(port: number, request: string, upgrade: boolean): Watched {
  const socket = net.connect(port, '127.0.0.1');
  socket.write(request);
  const chunks: Buffer[] = [];
  let error: string | undefined;
  let onStart: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (onStart = resolve));
  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    if (Buffer.concat(chunks).includes(FIRST)) onStart();
  });
  socket.on('error', (failure: NodeJS.ErrnoException) => (error = failure.code ?? failure.message));
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve())).then((): Ending => {
    const text = Buffer.concat(chunks).toString('latin1');
    const split = text.indexOf('\r\n\r\n');
    const head = split < 0 ? text : text.slice(0, split);
    const body = split < 0 ? '' : text.slice(split + 4);
    const detail = `${head.split('\r\n')[0]}; ${body.length} body bytes; ${error ?? 'closed'}; ends ${JSON.stringify(body.slice(-12))}`;
    if (upgrade) return { cut: error === 'ECONNRESET', detail };
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (length) return { cut: body.length < Number(length[1]), detail };
    return { cut: !/(^|\r\n)0\r\n(.*\r\n)*\r\n$/.test(body), detail };
  });
  return { started, ended };
}

/** An HTTP/2 visitor through TLS. Cut: the stream closed with an error code, not with END_STREAM or NO_ERROR. */
function watchH2(server: TestServer, hostname: string, path: string): Watched {
  const session = h2Session(server, hostname);
  const stream = session.request({ ':path': path, ':method': 'GET' });
  let onStart: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (onStart = resolve));
  let text = '';
  let endedClean = false;
  let trailers = false;
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
    if (text.includes(FIRST)) onStart();
  });
  stream.on('end', () => (endedClean = true));
  stream.on('trailers', () => (trailers = true));
  stream.on('error', () => undefined);
  const ended = new Promise<void>((resolve) => stream.once('close', () => resolve())).then((): Ending => {
    const code = stream.rstCode ?? 0;
    session.destroy();
    const detail = `${text.length} body bytes; rstCode ${code}; ${endedClean ? "'end'" : "no 'end'"}; ${trailers ? 'trailers' : 'no trailers'}`;
    return { cut: !endedClean && code === http2.constants.NGHTTP2_INTERNAL_ERROR, detail };
  });
  return { started, ended };
}

/** How the origin cuts a response it holds: a TCP reset, or a plain close (FIN) mid-body. */
export type OriginCut = 'reset' | 'close';

/** An origin whose responses send their head and FIRST, then wait for the test to cut them. */
export interface CutOrigin {
  port: number;
  /** Cuts the response (or upgraded connection) asked for with `key`. */
  cut(key: string, how: OriginCut): void;
  close(): Promise<void>;
}

/** Starts the cut origin on a free loopback port. */
export async function startCutOrigin(): Promise<CutOrigin> {
  const held = new Map<string, net.Socket>();
  const server = http.createServer((req, res) => {
    const [, framing, key] = (req.url ?? '').split('/');
    req.resume();
    const headers: http.OutgoingHttpHeaders = { 'content-type': 'text/plain' };
    if (framing === 'length') headers['content-length'] = '1000000';
    res.writeHead(200, headers);
    res.write(FIRST);
    held.set(key!, res.socket!);
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket) => {
    const key = (req.url ?? '').split('/')[2]!;
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: cut-test\r\n\r\n${FIRST}`);
    socket.on('error', () => undefined);
    held.set(key, socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as net.AddressInfo).port,
    cut(key, how) {
      const socket = held.get(key);
      if (!socket) throw new Error(`the origin holds no response for ${key}`);
      if (how === 'reset') socket.resetAndDestroy();
      else socket.destroy();
    },
    async close() {
      for (const socket of held.values()) socket.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
