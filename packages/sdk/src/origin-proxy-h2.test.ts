import assert from 'node:assert/strict';
import { once } from 'node:events';
import http2 from 'node:http2';
import type net from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { ResetCode, streamDuplex, type StreamDuplex, type ResponseHead } from '@svcrouter/protocol';
import { GRPC_NEEDS_H2 } from './grpc-refusal.js';
import {
  closedPort,
  collectAnswer,
  httpOrigin,
  openRequest,
  proxyFixture,
  selfSignedCertificate,
  visit,
  type ProxyFixture,
} from './origin-test-support.js';

/** A cleartext HTTP/2 origin (prior knowledge) counting its connections. */
async function h2cOrigin(
  onStream: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void,
): Promise<{ port: number; sessions: number; close(): Promise<void> }> {
  const server = http2.createServer();
  const result = { port: 0, sessions: 0, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  const sessions: http2.ServerHttp2Session[] = [];
  server.on('session', (session: http2.ServerHttp2Session) => {
    result.sessions++;
    sessions.push(session);
  });
  server.on('stream', (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
    // A stream the test closes with an error code reports it on itself.
    stream.on('error', () => undefined);
    onStream(stream, headers);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  result.port = (server.address() as net.AddressInfo).port;
  result.close = () => {
    for (const session of sessions) session.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return result;
}

describe('OriginProxy with proto h2', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  async function fixtureFor(address: string): Promise<ProxyFixture> {
    const fixture = await proxyFixture(address, { proto: 'h2' });
    cleanups.push(() => fixture.close());
    return fixture;
  }
  async function origin(onStream: Parameters<typeof h2cOrigin>[0]): Promise<Awaited<ReturnType<typeof h2cOrigin>>> {
    const server = await h2cOrigin(onStream);
    cleanups.push(() => server.close());
    return server;
  }

  it('forwards over one pooled HTTP/2 connection and passes response trailers', async () => {
    const seen: http2.IncomingHttpHeaders[] = [];
    const server = await origin((stream, headers) => {
      seen.push(headers);
      stream.respond({ ':status': 200, 'content-type': 'text/plain' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'x-checksum': 'abc123', 'x-svc-internal': 'forged' }));
      stream.end('hello');
    });
    const fixture = await fixtureFor(`127.0.0.1:${server.port}`);
    for (let i = 0; i < 3; i++) {
      const result = await visit(fixture, { path: `/n/${i}`, headers: ['x-custom', 'v'] });
      assert.equal(result.status, 200);
      assert.equal(result.body.toString(), 'hello');
      // Fields only the edge may set are dropped.
      assert.deepEqual(result.trailers, ['x-checksum', 'abc123']);
    }
    assert.equal(server.sessions, 1);
    assert.equal(seen[2]![':path'], '/n/2');
    assert.equal(seen[2]![':authority'], 'origin.test');
    assert.equal(seen[2]!['x-custom'], 'v');
    assert.equal((await fixture.nextLog()).status, 200);
  });

  it('streams both bodies at once and passes request trailers (bidirectional)', async () => {
    let requestTrailers: http2.IncomingHttpHeaders | undefined;
    const server = await origin((stream) => {
      stream.respond({ ':status': 200 });
      stream.on('data', (chunk: Buffer) => stream.write(`echo:${chunk.toString()};`));
      stream.on('trailers', (trailers: http2.IncomingHttpHeaders) => (requestTrailers = trailers));
      stream.on('end', () => stream.end());
    });
    const fixture = await fixtureFor(`h2c://127.0.0.1:${server.port}`);
    const stream = streamDuplex(fixture.edge.open({ m: 'POST', p: '/bidi', h: ['Host', 'origin.test'], t: 'tun_test', b: 1 }));
    const head = (await once(stream, 'headers')) as [ResponseHead];
    assert.equal(head[0].s, 200);
    // Each echo arrives before the next piece is sent: the response streams while the request does.
    for (const piece of ['a', 'b', 'c']) {
      stream.write(piece);
      const [chunk] = (await once(stream, 'data')) as [Buffer];
      assert.equal(chunk.toString(), `echo:${piece};`);
    }
    stream.endWithTrailers(['x-sum', '3']);
    stream.resume();
    await once(stream, 'end');
    assert.equal(requestTrailers?.['x-sum'], '3');
  });

  it('cancels the origin stream with RST_STREAM(CANCEL) when the visitor leaves', async () => {
    let closedWith: (code: number) => void = () => undefined;
    const closed = new Promise<number>((resolve) => (closedWith = resolve));
    const server = await origin((stream) => {
      stream.respond({ ':status': 200 });
      stream.write('first');
      stream.on('close', () => closedWith(stream.rstCode));
    });
    const fixture = await fixtureFor(`h2c://127.0.0.1:${server.port}`);
    const stream = openRequest(fixture.edge, { path: '/long' });
    await once(stream, 'data');
    stream.reset(ResetCode.CANCEL);
    assert.equal(await closed, http2.constants.NGHTTP2_CANCEL);
    assert.equal((await fixture.nextLog()).status, 499);
  });

  it('negotiates h2 with ALPN for an https target', async (t) => {
    const credentials = await selfSignedCertificate();
    if (!credentials) return t.skip('openssl is not installed');
    const server = http2.createSecureServer(credentials, (req, res) => res.end(`over ${req.httpVersion} ${req.headers[':scheme']}`));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const fixture = await fixtureFor(`https://localhost:${(server.address() as net.AddressInfo).port}`);
    const result = await visit(fixture);
    assert.equal(result.body.toString(), 'over 2.0 https');
  });

  it('opens a new connection for the next request once the origin said GOAWAY', async () => {
    const server = await origin((stream) => {
      stream.respond({ ':status': 200 });
      stream.end('ok');
      // The origin is going away (a restart): the request in flight completes, the next one needs a new connection.
      stream.session?.close();
    });
    const fixture = await fixtureFor(`h2c://127.0.0.1:${server.port}`);
    assert.equal((await visit(fixture)).body.toString(), 'ok');
    assert.equal((await visit(fixture)).body.toString(), 'ok');
    assert.equal(server.sessions, 2);
  });

  it('sends a body-less request the origin refused (REFUSED_STREAM) once more; one with a body fails', async () => {
    let streams = 0;
    const server = await origin((stream) => {
      if (streams++ % 2 === 0) return stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      stream.respond({ ':status': 200 });
      stream.end('second try');
    });
    const fixture = await fixtureFor(`h2c://127.0.0.1:${server.port}`);
    assert.equal((await visit(fixture)).body.toString(), 'second try');
    const upload = await visit(fixture, { method: 'POST', body: Buffer.from('x') });
    assert.equal(upload.resetCode, ResetCode.UPSTREAM_ERROR);
  });

  it('resets with UPSTREAM_REFUSED when nothing listens', async () => {
    const fixture = await fixtureFor(`h2c://127.0.0.1:${await closedPort()}`);
    const result = await visit(fixture);
    assert.equal(result.resetCode, ResetCode.UPSTREAM_REFUSED);
  });

  it('answers a gRPC call to an HTTP/1.1 target with 502 and grpc-status 14, without asking the origin', async () => {
    let asked = 0;
    const h1 = await httpOrigin((_req, res) => {
      asked++;
      res.end();
    });
    cleanups.push(() => h1.close());
    const fixture = await proxyFixture(h1.url);
    cleanups.push(() => fixture.close());
    const result = await visit(fixture, { method: 'POST', headers: ['content-type', 'application/grpc'], body: Buffer.from('x') });
    assert.equal(result.status, 502);
    const headers = Object.fromEntries(pairs(result.headers));
    assert.equal(headers['grpc-status'], '14');
    assert.equal(decodeURI(headers['grpc-message']!), GRPC_NEEDS_H2);
    assert.equal(asked, 0);
  });
});

describe('OriginProxy trailers over HTTP/1.1', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('passes a chunked response trailer section and chunked request trailers', async () => {
    let requestTrailers: NodeJS.Dict<string> | undefined;
    const origin = await httpOrigin((req, res) => {
      req.resume();
      req.on('end', () => {
        requestTrailers = req.trailers;
        res.writeHead(200, { trailer: 'x-checksum' });
        res.write('body');
        res.addTrailers({ 'x-checksum': 'sha-1', 'X-Upper': 'Kept' });
        res.end();
      });
    });
    cleanups.push(() => origin.close());
    const fixture = await proxyFixture(origin.url);
    cleanups.push(() => fixture.close());
    const stream: StreamDuplex = streamDuplex(fixture.edge.open({ m: 'POST', p: '/', h: ['Host', 'origin.test'], t: 'tun_test', b: 1 }));
    stream.write('up');
    stream.endWithTrailers(['x-request-sum', '42']);
    const result = await collectAnswer(stream);
    assert.equal(result.status, 200);
    assert.equal(result.body.toString(), 'body');
    assert.deepEqual(result.trailers, ['x-checksum', 'sha-1', 'x-upper', 'Kept']);
    assert.equal(requestTrailers?.['x-request-sum'], '42');
  });

  it('ends with a plain END, trailers dropped, towards a peer without the trailers feature', async () => {
    const origin = await httpOrigin((_req, res) => {
      res.write('body');
      res.addTrailers({ 'x-checksum': 'sha-1' });
      res.end();
    });
    cleanups.push(() => origin.close());
    const fixture = await proxyFixture(origin.url, { peerTrailers: false });
    cleanups.push(() => fixture.close());
    const result = await visit(fixture);
    assert.equal(result.body.toString(), 'body');
    assert.equal(result.trailers, undefined);
  });
});

function pairs(flat: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!.toLowerCase(), flat[i + 1]!]);
  return out;
}
