import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import http2 from 'node:http2';
import { after, before, describe, it } from 'node:test';
import {
  PATTERN_CHUNK_BYTES,
  patternChunk,
  patternSha256,
  tunnelSuite,
  visit,
  type TestAgent,
  type TestOrigin,
  type TestServer,
} from './harness/index.js';
import { MiB, RssWatch, connectH2, h2Request, hashBody, openStreams, readText, request, writeChunks } from './harness/data-path-support.js';

const GiB = 1024 * MiB;
/** Edge and agent may grow by less than this while a transfer runs: far below the sizes moved. */
const RSS_GROWTH_LIMIT = 300 * MiB;
/** Bounds a hung test (a buffered stream hangs rather than fails); not a timing assertion. */
const HANG = { timeout: 120_000 };

describe('streaming through the tunnel', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let agent: TestAgent;
  let watch: () => RssWatch;
  const tunnel = tunnelSuite();
  before(() => {
    ({ server, origin, agent } = tunnel);
    watch = () => new RssWatch({ edge: server.proc.child.pid!, agent: agent.proc.child.pid! });
  });

  it('delivers the SSE head and each event as the origin sends it, before the stream ends', HANG, async () => {
    const res = await request(server, agent.hostname, '/sse?count=3');
    // The head arrives while the origin has sent no event at all.
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/event-stream');
    await origin.sse.connected;
    res.setEncoding('utf8');
    const events = res[Symbol.asyncIterator]() as AsyncIterator<string>;
    let text = '';
    for (let index = 0; index < 3; index++) {
      origin.sse.next();
      // Event `index` must arrive while the origin holds every later one back.
      while (!text.includes(`data: event ${index}\n\n`)) {
        const { value, done } = await events.next();
        assert.ok(!done, `stream ended before event ${index}`);
        text += value;
      }
      assert.ok(!text.includes(`event ${index + 1}`));
    }
    assert.equal((await events.next()).done, true);
    assert.equal(text, 'data: event 0\n\ndata: event 1\n\ndata: event 2\n\n');
  });

  it('downloads 1 GiB intact over HTTP while edge and agent memory stays flat', HANG, async (t) => {
    const expected = patternSha256(GiB);
    const rss = watch();
    const res = await request(server, agent.hostname, `/pattern?n=${GiB}`);
    assert.equal(res.statusCode, 200);
    const body = await hashBody(res, (bytes) => rss.progress(bytes));
    rss.sample();
    t.diagnostic(`peak RSS growth: ${rss.describe()}`);
    assert.equal(body.length, GiB);
    assert.equal(body.sha256, expected);
    assert.deepEqual(rss.over(RSS_GROWTH_LIMIT), []);
  });

  it('uploads 1 GiB intact over HTTP while edge and agent memory stays flat', HANG, async (t) => {
    const expected = patternSha256(GiB);
    const rss = watch();
    const onReceived = (bytes: number): void => rss.progress(bytes);
    origin.activity.on('received', onReceived);
    try {
      const res = await request(server, agent.hostname, '/upload', {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', 'content-length': String(GiB) },
        body: (req) =>
          void writeChunks(req, GiB / PATTERN_CHUNK_BYTES, patternChunk).then(
            () => req.end(),
            (error: Error) => req.destroy(error),
          ),
      });
      assert.equal(res.statusCode, 200);
      const echo = JSON.parse(await readText(res)) as { bodySha256: string; bodyLength: number };
      rss.sample();
      t.diagnostic(`peak RSS growth: ${rss.describe()}`);
      assert.equal(echo.bodyLength, GiB);
      assert.equal(echo.bodySha256, expected);
      assert.deepEqual(rss.over(RSS_GROWTH_LIMIT), []);
    } finally {
      origin.activity.off('received', onReceived);
    }
  });

  it('makes the origin wait for a slow visitor instead of buffering the download on the way', HANG, async (t) => {
    const total = 512 * MiB;
    const readFirst = MiB;
    const rss = watch();
    const res = await request(server, agent.hostname, `/pattern?n=${total}`);
    let read = 0;
    await new Promise<void>((resolve) => {
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= readFirst) {
          res.pause();
          resolve();
        }
      });
    });
    // Stalled: the origin's last write is still waiting for 'drain' after three round trips
    // through the same tunnel; a path that buffered would keep draining it toward 512 MiB.
    const limit = 64 * MiB;
    const tooFar = new Promise<never>((_, reject) => {
      const check = (sent: number): void => {
        if (sent >= limit) reject(new Error(`origin wrote ${sent} bytes while the visitor read ${read}`));
      };
      origin.activity.on('sent', check);
      res.once('close', () => origin.activity.off('sent', check));
    });
    let quietRounds = 0;
    while (quietRounds < 3) {
      if (!origin.activity.blocked) await Promise.race([once(origin.activity, 'blocked'), tooFar]);
      const before = origin.activity.sent;
      rss.sample();
      await Promise.race([visit(server, agent.hostname, '/status/204'), tooFar]);
      quietRounds = origin.activity.blocked && origin.activity.sent === before ? quietRounds + 1 : 0;
    }
    t.diagnostic(`stalled: origin wrote ${origin.activity.sent} bytes, visitor read ${read}; peak RSS growth: ${rss.describe()}`);
    assert.ok(read < 2 * MiB, `visitor read ${read} bytes`);
    assert.ok(origin.activity.sent < limit, `origin wrote ${origin.activity.sent} bytes`);
    assert.deepEqual(rss.over(RSS_GROWTH_LIMIT), []);
    // The visitor leaves: the origin's response must be cancelled through the tunnel.
    const idle = once(origin.activity, 'idle');
    res.destroy();
    await idle;
  });

  it('streams an upload to the origin before the visitor has finished sending it', HANG, async () => {
    const chunks = 256;
    let firstSeen = false;
    const res = await request(server, agent.hostname, '/upload', {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: (req) => {
        // Chunked (no length): the first chunk must reach the origin on its own.
        req.write(patternChunk(0));
        once(origin.activity, 'received')
          .then(() => {
            firstSeen = true;
            return writeChunks(req, chunks - 1, (index) => patternChunk(index + 1));
          })
          .then(
            () => req.end(),
            (error: Error) => req.destroy(error),
          );
      },
    });
    const echo = JSON.parse(await readText(res)) as { bodySha256: string; bodyLength: number };
    assert.ok(firstSeen);
    assert.equal(echo.bodyLength, chunks * PATTERN_CHUNK_BYTES);
    assert.equal(echo.bodySha256, patternSha256(chunks * PATTERN_CHUNK_BYTES));
  });

  it('frees the stream when the origin answers before reading the whole upload', HANG, async () => {
    const res = await request(server, agent.hostname, '/status/413', {
      method: 'POST',
      // Keep-alive, as browsers send it: with `Connection: close` the edge (like any Node
      // server) closes after its answer while bytes still arrive, and the reset can beat it.
      headers: { 'content-length': String(64 * MiB), connection: 'keep-alive' },
      // The visitor keeps sending while the answer comes back; it stops once it has the answer.
      body: (req) =>
        void writeChunks(req, (64 * MiB) / PATTERN_CHUNK_BYTES, patternChunk).then(
          () => req.end(),
          () => undefined,
        ),
    });
    assert.equal(res.statusCode, 413);
    assert.equal(await readText(res), 'status 413');
    res.socket?.destroy();
    // The edge has handed the whole answer to the visitor, so it is done with the stream.
    assert.equal(await openStreams(server), 0);
    assert.equal((await visit(server, agent.hostname, '/echo')).status, 200);
  });

  describe('over HTTPS with HTTP/2 (ALPN h2)', () => {
    let session: http2.ClientHttp2Session;
    before(async () => {
      session = await connectH2(server, agent.hostname);
    });
    after(() => session?.close());

    it('negotiates h2 and passes method, path, headers and response headers through', HANG, async () => {
      assert.equal((session.socket as unknown as { alpnProtocol: string }).alpnProtocol, 'h2');
      const { headers, text } = await h2Request(session, { ':method': 'GET', ':path': '/echo?q=1', 'x-custom': 'kept' });
      assert.equal(headers[':status'], 200);
      assert.equal(headers['x-origin'], 'yes');
      assert.deepEqual(headers['set-cookie'], ['a=1', 'b=2']);
      const echo = JSON.parse(text) as { method: string; url: string; headers: Record<string, string>; bodyLength: number };
      assert.equal(echo.method, 'GET');
      assert.equal(echo.url, '/echo?q=1');
      assert.equal(echo.headers['x-custom'], 'kept');
      assert.equal(echo.headers.host, `${agent.hostname}:${server.httpsPort}`);
      assert.equal(echo.headers['x-forwarded-proto'], 'https');
      assert.equal(echo.bodyLength, 0);
    });

    it('carries a POST body over h2 to the origin intact', HANG, async () => {
      const body = Buffer.concat([patternChunk(0), patternChunk(1), Buffer.from('tail')]);
      const { headers, text } = await h2Request(
        session,
        { ':method': 'POST', ':path': '/echo', 'content-type': 'application/octet-stream' },
        body,
      );
      assert.equal(headers[':status'], 200);
      const echo = JSON.parse(text) as { method: string; bodyLength: number; bodySha256: string };
      assert.equal(echo.method, 'POST');
      assert.equal(echo.bodyLength, body.length);
      assert.equal(echo.bodySha256, createHash('sha256').update(body).digest('hex'));
    });

    it('stops the origin and frees the stream when an h2 visitor cancels a download', HANG, async () => {
      const stream = session.request({ ':method': 'GET', ':path': `/pattern?n=${512 * MiB}` });
      const [headers] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
      assert.equal(headers[':status'], 200);
      await once(stream, 'data');
      const idle = once(origin.activity, 'idle');
      stream.close(http2.constants.NGHTTP2_CANCEL);
      // The origin's response was cancelled through the tunnel, so the edge has let go of it too.
      await idle;
      assert.equal(await openStreams(server), 0);
    });

    it('streams a 16 MiB h2 download intact', HANG, async () => {
      const stream = session.request({ ':method': 'GET', ':path': `/pattern?n=${16 * MiB}` });
      const [headers] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
      assert.equal(headers[':status'], 200);
      const body = await hashBody(stream);
      assert.equal(body.length, 16 * MiB);
      assert.equal(body.sha256, patternSha256(16 * MiB));
    });
  });
});
