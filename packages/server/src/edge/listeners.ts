import http from 'node:http';
import http2 from 'node:http2';
import net, { type AddressInfo, type Socket } from 'node:net';
import tls from 'node:tls';
import { IdTable } from '@svcrouter/protocol';
import type { Edge } from './edge.js';
import { VisitorConnection } from './lean/visitor-connection.js';
import { EndedSocketReaper } from './ended-socket-reaper.js';
import { IpRules } from '../policy/index.js';
import { inheritRemoteAddress, readProxyHeader } from './proxy-protocol.js';
import { connectRefusedPage, rawResponse } from './pages.js';
import {
  DEFAULT_LISTENER_TIMEOUTS,
  H2_CONNECTION_WINDOW,
  H2_HEADER_LIST_CAP,
  H2_MAX_CONCURRENT_STREAMS,
  H2_MAX_HEADER_PAIRS,
  H2_STREAM_WINDOW,
  MAX_HEADER_BYTES,
  type ListenerTimeouts,
} from './limits.js';

/** Pending-connection queue per listener: a short backlog shows up as multi-second p99 under bursts. */
export const LISTEN_BACKLOG = 2048;
/**
 * Bytes a visitor connection queues before the edge pauses the stream feeding it. Node's 16 KiB
 * default paused and resumed every tunnelled 64 KiB chunk; bounded per visitor either way.
 */
const VISITOR_HIGH_WATER = 256 * 1024;
export { MAX_HEADER_BYTES };

export interface EdgeListeners {
  httpPort: number;
  httpsPort: number;
  /** The plain-HTTP and TLS listeners, whose 'connection' events see every public socket. */
  readonly servers: { readonly plain: net.Server; readonly tls: tls.Server };
  /** Stops taking connections (new dials are refused); those already open carry on. */
  stopAccepting(): void;
  close(): Promise<void>;
}

export interface ListenOptions {
  host: string;
  httpPort: number;
  httpsPort: number;
  SNICallback: tls.TlsOptions['SNICallback'];
  /** Certificate for handshakes without SNI (clients dialling an IP address). */
  defaultCertificate: { certPem: string; keyPem: string };
  /** Overrides of DEFAULT_LISTENER_TIMEOUTS (limits.ts). */
  timeouts?: Partial<ListenerTimeouts>;
  /** SVC_TRUSTED_PROXIES: CIDRs whose connections may start with a PROXY protocol header. */
  trustedProxies?: readonly string[];
}

/**
 * Starts the public listeners: plain HTTP, and TLS where ALPN picks HTTP/2 or HTTP/1.1 per
 * connection. HTTP/1.1 connections start on the lean path (lean/visitor-connection.ts), which
 * serves body-less requests to tunnels itself and hands the connection to Node's HTTP server for
 * anything else. Both HTTP/1.1 servers handle `Upgrade` (agents and visitors' WebSockets);
 * HTTP/2 visitors get the same routing through the compatibility API.
 */
export async function startListeners(edge: Edge, options: ListenOptions): Promise<EdgeListeners> {
  const timeouts: ListenerTimeouts = { ...DEFAULT_LISTENER_TIMEOUTS, ...options.timeouts };
  const http1 = createHttp1(edge, false, timeouts);
  const secure1 = createHttp1(edge, true, timeouts);
  const lean = (socket: Socket, secure: boolean): VisitorConnection =>
    new VisitorConnection(socket, {
      secure,
      maxHeadBytes: MAX_HEADER_BYTES,
      keepAliveMs: timeouts.keepAliveMs,
      handler: edge,
      handOver: (taken) => (secure ? secure1 : http1).emit('connection', taken),
    });
  // Not allowHalfOpen: a visitor's FIN closes the connection and cancels a request in flight, as
  // Node's HTTP server does by default (httpAllowHalfOpen false) and as proxies treat a client abort.
  // Connections from a trusted balancer may start with a PROXY header naming the visitor; others
  // are never read for one (a header from them fails as HTTP or TLS and closes the connection).
  const trusted = options.trustedProxies?.length ? new IpRules(options.trustedProxies, undefined) : undefined;
  const fromTrusted = (socket: Socket): boolean => trusted !== undefined && trusted.admits(socket.remoteAddress ?? '');
  const plain = net.createServer({ noDelay: true, highWaterMark: VISITOR_HIGH_WATER }, (socket) => {
    if (!fromTrusted(socket)) return void lean(socket, false);
    readProxyHeader(socket, (proxied) => {
      lean(proxied, false);
      proxied.resume();
    });
  });
  const secure2 = http2.createServer({
    maxSessionMemory: 64,
    // Heads above MAX_HEADER_BYTES must arrive whole to be answered 431 (Edge.handleRequest)
    // rather than reset by nghttp2 at its defaults (64 KiB, 128 fields).
    maxHeaderListPairs: H2_MAX_HEADER_PAIRS,
    settings: {
      maxHeaderListSize: H2_HEADER_LIST_CAP,
      initialWindowSize: H2_STREAM_WINDOW,
      maxConcurrentStreams: H2_MAX_CONCURRENT_STREAMS,
    },
  });
  // The connection window is not a setting: it is widened by a WINDOW_UPDATE once the session exists.
  secure2.on('session', (session: http2.ServerHttp2Session) => session.setLocalWindowSize(H2_CONNECTION_WINDOW));
  secure2.on('request', (req, res) => edge.handleRequest(req, res, true));
  // `Expect: 100-continue` is the origin's to answer (Edge.handleRequest); other expectations
  // get Node's 417, as no origin could meet them through the edge.
  secure2.on('checkContinue', (req, res) => edge.handleRequest(req, res, true));
  secure2.on('sessionError', () => undefined);
  // Node answers an HTTP/2 CONNECT itself with a bare 405 unless someone listens: the edge's page, with Allow.
  secure2.on('connect', (_req, res: http2.Http2ServerResponse) => {
    const refused = connectRefusedPage();
    res.writeHead(refused.status, refused.headers);
    res.end(refused.body);
  });
  // An idle session is closed gracefully: no new streams, those still open (a long poll) finish.
  secure2.setTimeout(timeouts.h2IdleMs);
  secure2.on('timeout', (session: http2.ServerHttp2Session) => session.close());

  const tlsServer = tls.createServer({
    SNICallback: options.SNICallback,
    cert: options.defaultCertificate.certPem,
    key: options.defaultCertificate.keyPem,
    ALPNProtocols: ['h2', 'http/1.1'],
    minVersion: 'TLSv1.2',
    handshakeTimeout: timeouts.tlsHandshakeMs,
    // As Node's HTTP server sets for its own sockets: a response's last bytes must not wait for an ACK.
    noDelay: true,
  });
  // Not a Set: visitors that do not keep connections alive churn it (see IdTable).
  const sockets = new IdTable<Socket>();
  const track = (socket: Socket): void => {
    const id = sockets.add(socket);
    socket.once('close', () => sockets.delete(id));
  };
  // A plain TCP listener takes the HTTPS port and hands each connection to the TLS server (which
  // never listens itself): after a trusted balancer's PROXY header, and after the ClientHello's SNI
  // while a TLS passthrough tunnel is bound (edge/tls/); otherwise straight away, nothing read.
  const passthrough = edge.tlsPassthrough;
  let httpsPort = 0;
  const toTls = (socket: Socket): void => {
    if (!passthrough.active) return void tlsServer.emit('connection', socket);
    passthrough.accept(socket, httpsPort, (handed) => tlsServer.emit('connection', handed));
  };
  const front = net.createServer({ noDelay: true }, (socket) => {
    if (trusted === undefined || !fromTrusted(socket)) return toTls(socket);
    readProxyHeader(socket, toTls);
  });
  const secureEntry: net.Server = front;
  tlsServer.on('secureConnection', (socket: tls.TLSSocket) => {
    if (trusted !== undefined) inheritRemoteAddress(socket);
    // The TLS socket is the one ended and written to; the TCP socket under it is tracked too.
    track(socket);
    if (socket.alpnProtocol === 'h2') secure2.emit('connection', socket);
    else lean(socket, true);
  });
  // Failed handshakes (unknown SNI, scanners) are routine: drop them quietly.
  tlsServer.on('tlsClientError', (_error, socket) => socket.destroy());

  await listen(plain, options.host, options.httpPort);
  await listen(secureEntry, options.host, options.httpsPort);
  httpsPort = (secureEntry.address() as AddressInfo).port;
  for (const server of [plain, secureEntry]) server.on('connection', track);
  const reaper = new EndedSocketReaper(sockets, timeouts.endGraceMs);
  // One close per listener: a second server.close() fails with ERR_SERVER_NOT_RUNNING.
  let closing: Array<Promise<void>> | undefined;
  return {
    httpPort: (plain.address() as AddressInfo).port,
    httpsPort: (secureEntry.address() as AddressInfo).port,
    servers: { plain, tls: tlsServer },
    stopAccepting() {
      closing ??= [plain, secureEntry].map((server) => new Promise<void>((resolve) => server.close(() => resolve())));
    },
    async close() {
      reaper.stop();
      closing ??= [plain, secureEntry].map((server) => new Promise<void>((resolve) => server.close(() => resolve())));
      for (const socket of sockets.snapshot()) socket.destroy();
      passthrough.close();
      secure1.closeAllConnections();
      http1.closeAllConnections();
      for (const server of [http1, secure1]) server.close();
      await Promise.all(closing);
    },
  };
}

function createHttp1(edge: Edge, secure: boolean, timeouts: ListenerTimeouts): http.Server {
  const server = http.createServer({
    maxHeaderSize: MAX_HEADER_BYTES,
    requireHostHeader: false,
    highWaterMark: VISITOR_HIGH_WATER,
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    // How often Node checks both: often enough that neither overshoots by much.
    connectionsCheckingInterval: Math.max(10, Math.min(30_000, Math.floor(Math.min(timeouts.headersMs, timeouts.requestMs) / 4))),
  });
  server.on('request', (req, res) => edge.handleRequest(req, res, secure));
  server.on('checkContinue', (req, res) => edge.handleRequest(req, res, secure));
  server.on('upgrade', (req, socket, head) => edge.handleUpgrade(req, socket, head, secure));
  // Without a listener Node destroys a CONNECT's socket, and the visitor gets no answer at all.
  server.on('connect', (_req, socket: Socket) => {
    socket.on('error', () => socket.destroy());
    socket.end(rawResponse(connectRefusedPage()));
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') return socket.destroy();
    const status =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? '431 Request Header Fields Too Large'
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? '408 Request Timeout'
          : '400 Bad Request';
    socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
  });
  server.keepAliveTimeout = timeouts.keepAliveMs;
  // This server never listens (connections are handed to it), and Node starts the checks of
  // headersTimeout and requestTimeout on 'listening': without them a visitor trickling a head
  // would hold its connection for ever. close() stops the checks again.
  server.emit('listening');
  return server;
}

function listen(server: net.Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
