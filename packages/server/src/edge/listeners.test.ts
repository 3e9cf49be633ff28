import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { loadOrCreateDevCa } from '../certs/dev-ca.js';
import type { Edge } from './edge.js';
import { H2_CONNECTION_WINDOW, H2_MAX_CONCURRENT_STREAMS, H2_STREAM_WINDOW } from './limits.js';
import { startListeners, type EdgeListeners } from './listeners.js';

/** Bounds a hung test (a socket the edge never lets go); not a timing assertion. */
const HANG = { timeout: 15_000 };

/**
 * The listeners' timeouts, through real sockets, with short values: every kind of connection a
 * visitor can hold open without doing anything is let go. The edge behind them is a stand-in
 * that answers every request with 200 (its collaborator, not what is under test).
 */
describe('listener timeouts', () => {
  let dataDir: string;
  let listeners: EdgeListeners;
  let caPem: string;
  const HOSTNAME = 'app.localhost';

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'svc-listeners-'));
    const ca = await loadOrCreateDevCa(dataDir);
    caPem = ca.certPem;
    const leaf = await ca.issueLeaf(HOSTNAME);
    const edge = {
      handleRequest: (_req: IncomingMessage, res: ServerResponse) => res.end('ok'),
      handleUpgrade: (_req: IncomingMessage, socket: net.Socket) => socket.destroy(),
      serveLean: () => false,
      // No TLS passthrough tunnel: the HTTPS port hands every connection to TLS unread.
      tlsPassthrough: { active: false, close: () => undefined },
    } as unknown as Edge;
    listeners = await startListeners(edge, {
      host: '127.0.0.1',
      httpPort: 0,
      httpsPort: 0,
      SNICallback: undefined,
      defaultCertificate: leaf,
      timeouts: { headersMs: 200, requestMs: 400, keepAliveMs: 200, h2IdleMs: 200, tlsHandshakeMs: 200, endGraceMs: 100 },
    });
  });
  after(async () => {
    await listeners?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers 408 to a head that never completes, and destroys the socket although the client never reads or closes', HANG, async () => {
    const accepted = once(listeners.servers.plain, 'connection') as Promise<[net.Socket]>;
    const client = net.connect({ host: '127.0.0.1', port: listeners.httpPort, allowHalfOpen: true });
    client.on('error', () => undefined);
    client.write(`GET / HTTP/1.1\r\nHost: ${HOSTNAME}\r\nX-Slow: `);
    client.pause();
    const [edgeSide] = await accepted;
    await once(edgeSide, 'close');
    client.resume();
    const [answer] = (await once(client, 'data')) as [Buffer];
    assert.match(answer.toString('latin1'), /^HTTP\/1\.1 408 /);
    client.destroy();
  });

  it('closes an idle keep-alive HTTP/1.1 connection', HANG, async () => {
    const client = net.connect({ host: '127.0.0.1', port: listeners.httpPort });
    client.on('error', () => undefined);
    client.write(`GET / HTTP/1.1\r\nHost: ${HOSTNAME}\r\n\r\n`);
    const [answer] = (await once(client, 'data')) as [Buffer];
    assert.match(answer.toString('latin1'), /^HTTP\/1\.1 200 /);
    await once(client, 'close');
  });

  it('closes an idle HTTP/2 session', HANG, async () => {
    const session = http2.connect(`https://${HOSTNAME}:${listeners.httpsPort}`, {
      createConnection: () =>
        tls.connect({ host: '127.0.0.1', port: listeners.httpsPort, servername: HOSTNAME, ca: caPem, ALPNProtocols: ['h2'] }),
    });
    session.on('error', () => undefined);
    const stream = session.request({ ':path': '/' });
    stream.resume();
    await once(stream, 'close');
    const [code] = (await once(session, 'goaway')) as [number];
    assert.equal(code, http2.constants.NGHTTP2_NO_ERROR);
    await once(session, 'close');
  });

  it(
    'announces the bulk-transfer flow-control windows to HTTP/2 visitors, per stream and per connection, and the stream cap',
    HANG,
    async () => {
      const session = http2.connect(`https://${HOSTNAME}:${listeners.httpsPort}`, {
        createConnection: () =>
          tls.connect({ host: '127.0.0.1', port: listeners.httpsPort, servername: HOSTNAME, ca: caPem, ALPNProtocols: ['h2'] }),
      });
      session.on('error', () => undefined);
      const [settings] = (await once(session, 'remoteSettings')) as [http2.Settings];
      assert.equal(settings.initialWindowSize, H2_STREAM_WINDOW);
      assert.equal(settings.maxConcurrentStreams, H2_MAX_CONCURRENT_STREAMS, 'the bound on what one connection parks');
      // The connection window comes as a WINDOW_UPDATE after the edge's SETTINGS, before it
      // answers anything: once a response arrived, the client's view of it is final.
      const stream = session.request({ ':path': '/' });
      stream.resume();
      await once(stream, 'end');
      assert.equal(session.state.remoteWindowSize, H2_CONNECTION_WINDOW);
      session.close();
      await once(session, 'close');
    },
  );

  it('drops a TLS connection whose handshake never starts', HANG, async () => {
    const client = net.connect({ host: '127.0.0.1', port: listeners.httpsPort });
    client.on('error', () => undefined);
    await once(client, 'connect');
    await once(client, 'close');
  });
});
