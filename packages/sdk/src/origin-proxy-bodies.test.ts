import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type http from 'node:http';
import { describe, it } from 'node:test';
import { streamDuplex } from '@svcrouter/protocol';
import { collectAnswer, httpOrigin, openRequest, originSetup, tcpOrigin, sha256, visit } from './origin-test-support.js';

// Bodies through OriginProxy: request bodies with and without a length, big transfers both
// ways, and the visitor or the origin stopping half-way.

/** Reads a request body whole (the tests' bodies fit in memory). */
async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('OriginProxy bodies', () => {
  const setup = originSetup();

  it('sends a body without Content-Length chunk-encoded, and it arrives intact', async () => {
    const { fixture } = await setup(
      await httpOrigin(async (req, res) => {
        const body = await readBody(req);
        res.end(JSON.stringify({ te: req.headers['transfer-encoding'], sha: sha256(body) }));
      }),
    );
    const body = randomBytes(1024 * 1024 + 17);
    const result = await visit(fixture, { method: 'POST', body });
    assert.deepEqual(JSON.parse(result.body.toString()), { te: 'chunked', sha: sha256(body) });
  });

  it('sends a body with Content-Length as it is, and reuses the connection after it', async () => {
    const { origin, fixture } = await setup(
      await httpOrigin(async (req, res) => {
        const body = await readBody(req);
        res.end(`${req.headers['transfer-encoding'] ?? 'none'} ${body.toString()}`);
      }),
    );
    for (const text of ['first', 'second']) {
      const result = await visit(fixture, { method: 'PUT', headers: ['Content-Length', String(text.length)], body: Buffer.from(text) });
      assert.equal(result.body.toString(), `none ${text}`);
    }
    assert.equal(origin.connections.length, 1);
  });

  it('moves 64 MiB up and back down intact', async () => {
    const { fixture } = await setup(await httpOrigin((req, res) => req.pipe(res)));
    const body = randomBytes(64 * 1024 * 1024);
    const result = await visit(fixture, { method: 'POST', body });
    assert.equal(result.resetCode, undefined);
    assert.equal(result.body.length, body.length);
    assert.equal(sha256(result.body), sha256(body));
  });

  it('destroys the origin connection and logs 499 when the visitor leaves mid-response', async () => {
    const { origin, fixture } = await setup(
      await httpOrigin((_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
        res.write(Buffer.alloc(1000));
      }),
    );
    const stream = openRequest(fixture.edge);
    await once(stream, 'data');
    stream.reset('CANCEL');
    await once(origin.connections[0]!, 'close');
    assert.equal((await fixture.nextLog()).status, 499);
  });

  it('drops the rest of an upload the origin answered without reading, and keeps serving', async () => {
    const { fixture } = await setup(
      await httpOrigin((req, res) => {
        if (req.url === '/upload') res.writeHead(413).end('too big');
        else res.end('next');
      }),
    );
    const result = await visit(fixture, { method: 'POST', path: '/upload', body: randomBytes(8 * 1024 * 1024) });
    assert.equal(result.status, 413);
    assert.equal(result.body.toString(), 'too big');
    assert.equal((await fixture.nextLog()).status, 413);
    assert.equal((await visit(fixture)).body.toString(), 'next');
  });

  it('never ends a chunked upload the visitor abandoned', async () => {
    let received = '';
    let partArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (partArrived = resolve));
    let closed!: Promise<unknown>;
    const { fixture } = await setup(
      await tcpOrigin((socket) => {
        closed = once(socket, 'close');
        socket.on('data', (chunk: Buffer) => {
          received += chunk.toString('latin1');
          if (received.includes('part one')) partArrived();
        });
      }),
    );
    // A stream that stays open for more body, as a visitor's upload in progress.
    const upload = streamDuplex(fixture.edge.open({ m: 'POST', p: '/', h: ['Host', 'origin.test'], t: 'tun_test', b: 1 }));
    const answer = collectAnswer(upload);
    upload.write(Buffer.from('part one'));
    await arrived;
    upload.reset('CANCEL');
    await answer;
    await closed;
    assert.ok(received.includes('Transfer-Encoding: chunked'));
    assert.ok(!received.includes('0\r\n\r\n'), 'no last chunk after an abandoned upload');
    assert.equal((await fixture.nextLog()).status, 499);
  });
});
