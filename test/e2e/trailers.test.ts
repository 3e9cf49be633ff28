import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import http2 from 'node:http2';
import type net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { edgeUrl, loopbackLookup, serverSuite, startAgent, type TestAgent } from './harness/index.js';
import { connectH2, readText } from './harness/data-path-support.js';

/**
 * The origin's handler, the same for its HTTP/1.1 and HTTP/2 servers: GET /sum answers a body
 * and a checksum trailer; POST /echo answers with the request's trailers as its own.
 */
function handler(req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse): void {
  req.resume();
  req.on('end', () => {
    // The two servers' responses share these methods but not their overloads.
    const response = res as http.ServerResponse;
    response.writeHead(200, { 'content-type': 'text/plain', trailer: 'x-checksum' });
    response.write('body');
    const trailers: Record<string, string> =
      req.method === 'POST' ? { 'x-echo': String(req.trailers['x-request-sum'] ?? 'none') } : { 'x-checksum': 'sha256-abc' };
    response.addTrailers(trailers);
    response.end();
  });
}

async function listen(server: http.Server | http2.Http2Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as net.AddressInfo).port;
}

/** An HTTP/1.1 visit; resolves with the status, body and trailers. */
function h1Visit(
  edge: Parameters<typeof edgeUrl>[0],
  hostname: string,
  path: string,
  requestTrailers?: Record<string, string>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string; trailers: NodeJS.Dict<string> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(edgeUrl(edge, hostname, path), {
      method: requestTrailers ? 'POST' : 'GET',
      lookup: loopbackLookup,
      agent: false,
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, trailers: res.trailers }));
    });
    if (requestTrailers) {
      // No Content-Length: Node sends the body chunked, so the trailers have a place.
      req.write('upload');
      req.addTrailers(requestTrailers);
    }
    req.end();
  });
}

/** An HTTP/2 visit over TLS; resolves with the status, body and trailers. */
async function h2Visit(
  session: http2.ClientHttp2Session,
  path: string,
  requestTrailers?: Record<string, string>,
): Promise<{ status: number; body: string; trailers: http2.IncomingHttpHeaders }> {
  const stream = session.request(
    { ':path': path, ':method': requestTrailers ? 'POST' : 'GET' },
    { endStream: !requestTrailers, waitForTrailers: Boolean(requestTrailers) },
  );
  if (requestTrailers) {
    stream.on('wantTrailers', () => stream.sendTrailers(requestTrailers));
    stream.end('upload');
  }
  let trailers: http2.IncomingHttpHeaders = {};
  stream.on('trailers', (received: http2.IncomingHttpHeaders) => (trailers = received));
  const [headers] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
  const body = await readText(stream);
  return { status: Number(headers[':status']), body, trailers };
}

for (const originProto of ['http1', 'h2'] as const) {
  describe(`trailers through the tunnel, ${originProto} origin`, () => {
    const system = serverSuite();
    let origin: http.Server | http2.Http2Server;
    let agent: TestAgent;
    before(async () => {
      origin = originProto === 'h2' ? http2.createServer(handler) : http.createServer(handler);
      const port = await listen(origin);
      const args = originProto === 'h2' ? ['--proto', 'h2'] : [];
      agent = await startAgent(system.server, { token: system.server.token, target: port, args });
    });
    after(async () => {
      await agent?.close();
      if (origin instanceof http.Server) origin.closeAllConnections();
      await new Promise<void>((resolve) => origin?.close(() => resolve()));
    });

    it('gives an HTTP/1.1 visitor the response trailers, in the last chunk', async () => {
      const result = await h1Visit(system.server, agent.hostname, '/sum');
      assert.equal(result.status, 200);
      assert.equal(result.body, 'body');
      assert.equal(result.headers['transfer-encoding'], 'chunked');
      assert.equal(result.headers.trailer, 'x-checksum');
      assert.equal(result.trailers['x-checksum'], 'sha256-abc');
    });

    it("carries an HTTP/1.1 visitor's request trailers to the origin", async () => {
      const result = await h1Visit(system.server, agent.hostname, '/echo', { 'x-request-sum': '42' });
      assert.equal(result.body, 'body');
      assert.equal(result.trailers['x-echo'], '42');
    });

    it('gives an HTTP/2 visitor the response trailers', async () => {
      const session = await connectH2(system.server, agent.hostname);
      try {
        const result = await h2Visit(session, '/sum');
        assert.equal(result.status, 200);
        assert.equal(result.body, 'body');
        assert.equal(result.trailers['x-checksum'], 'sha256-abc');
      } finally {
        session.close();
      }
    });

    it("carries an HTTP/2 visitor's request trailers to the origin", async () => {
      const session = await connectH2(system.server, agent.hostname);
      try {
        const result = await h2Visit(session, '/echo', { 'x-request-sum': '7' });
        assert.equal(result.body, 'body');
        assert.equal(result.trailers['x-echo'], '7');
      } finally {
        session.close();
      }
    });
  });
}
