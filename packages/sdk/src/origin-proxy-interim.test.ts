import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { streamDuplex, type RequestHead, type ResponseHead } from '@svcrouter/protocol';
import { collectAnswer, httpOrigin, originSetup, visit, writeInPieces } from './origin-test-support.js';

// Early answers and interim (1xx) responses through OriginProxy: the origin's 100 Continue and
// 103 Early Hints become INFO frames for an edge that takes them, and an origin that answers
// and closes without reading the body is answered, not failed.

const HINT = '</style.css>; rel=preload; as=style';

describe('OriginProxy interim responses and early answers', () => {
  const setup = originSetup();

  it('passes 103 Early Hints as INFO, before the final head, to an edge that takes them', async () => {
    const { fixture } = await setup(
      await httpOrigin((_req, res) => {
        res.writeEarlyHints({ link: HINT });
        res.end('done');
      }),
    );
    const head: RequestHead = { m: 'GET', p: '/', h: ['Host', 'origin.test'], t: 'tun_test', i: 1 };
    const stream = streamDuplex(fixture.edge.open(head, undefined, true));
    const events: string[] = [];
    stream.on('info', (meta: ResponseHead) => events.push(`info ${meta.s} ${meta.h.join('|')}`));
    stream.on('headers', (meta: ResponseHead) => events.push(`headers ${meta.s}`));
    const answer = await collectAnswer(stream);
    assert.equal(answer.body.toString(), 'done');
    assert.deepEqual(events, [`info 103 Link|${HINT}`, 'headers 200']);
  });

  it('sends no INFO to an edge that did not ask for it', async () => {
    const { fixture } = await setup(
      await httpOrigin((_req, res) => {
        res.writeEarlyHints({ link: HINT });
        res.end('done');
      }),
    );
    const stream = streamDuplex(
      fixture.edge.open({ m: 'GET', p: '/', h: ['Host', 'origin.test'], t: 'tun_test' } satisfies RequestHead, undefined, true),
    );
    let infos = 0;
    stream.on('info', () => infos++);
    const answer = await collectAnswer(stream);
    assert.equal(answer.status, 200);
    assert.equal(infos, 0);
  });

  it("forwards Expect: 100-continue and passes the origin's 100 before the body goes", async () => {
    const { fixture } = await setup(
      await httpOrigin((req, res) => {
        let length = 0;
        req.on('data', (chunk: Buffer) => (length += chunk.length));
        req.on('end', () => res.end(`read ${length} after ${String(req.headers.expect)}`));
      }),
    );
    const body = Buffer.alloc(100_000, 1);
    const head: RequestHead = {
      m: 'PUT',
      p: '/',
      h: ['Host', 'origin.test', 'Expect', '100-continue', 'Content-Length', String(body.length)],
      t: 'tun_test',
      b: 1,
      i: 1,
    };
    const stream = streamDuplex(fixture.edge.open(head));
    const answer = collectAnswer(stream);
    stream.once('info', (meta: ResponseHead) => {
      assert.equal(meta.s, 100);
      void writeInPieces(stream, body);
    });
    assert.equal((await answer).body.toString(), `read ${body.length} after 100-continue`);
  });

  it('answers with the origin 413 when it closes without reading the body, every time', async () => {
    const { fixture } = await setup(
      await httpOrigin((_req, res) => {
        res.writeHead(413, { connection: 'close' });
        res.end('too large');
      }),
    );
    const body = Buffer.alloc(16 * 1024 * 1024, 7);
    for (let attempt = 0; attempt < 10; attempt++) {
      const answer = await visit(fixture, { method: 'PUT', headers: ['Content-Length', String(body.length)], body });
      assert.deepEqual([answer.resetCode, answer.status, answer.body.toString()], [undefined, 413, 'too large'], `attempt ${attempt}`);
      assert.equal((await fixture.nextLog()).status, 413);
    }
  });
});
