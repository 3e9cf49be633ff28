import assert from 'node:assert/strict';
import http from 'node:http';
import type http2 from 'node:http2';
import { describe, it } from 'node:test';
import { loopbackLookup } from './harness/index.js';
import type { RequestHead } from '@svcrouter/protocol';
import { startHostileAgent } from './harness/hostile-agent.js';
import { rawExchange } from './harness/raw-exchange.js';
import { h2VisitorSuite, LINK_HINT, semanticsSuite } from './harness/semantics-origin.js';

const BODY = Buffer.alloc(1024 * 1024, 0x62);
/** More than any request head the tests send, far less than BODY. */
const HEAD_ROOM = 8 * 1024;
/** Bounds a hung test; not a timing assertion. */
const HANG = { timeout: 30_000 };

interface Answer {
  status: number;
  text: string;
  /** Interim responses seen before the final one: status and headers. */
  interim: Array<{ status: number; headers: Record<string, unknown> }>;
  /** Whether the body was sent (only after a 100 Continue). */
  sentBody: boolean;
}

/**
 * An HTTP/1.1 request as a careful client makes it: with `Expect: 100-continue` (when `expect`)
 * the body goes only after a 100 Continue, never on a timer.
 */
function request1(port: number, hostname: string, path: string, method: string, expect?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = expect ? { expect, 'content-length': String(BODY.length) } : {};
    const req = http.request(`http://${hostname}:${port}${path}`, { method, headers, lookup: loopbackLookup, agent: false });
    const answer: Answer = { status: 0, text: '', interim: [], sentBody: false };
    req.on('information', (info) => answer.interim.push({ status: info.statusCode, headers: info.headers }));
    req.on('continue', () => {
      answer.sentBody = true;
      req.end(BODY);
    });
    req.on('response', (res) => {
      answer.status = res.statusCode ?? 0;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (answer.text += chunk));
      res.on('end', () => {
        resolve(answer);
        req.destroy();
      });
    });
    req.on('error', reject);
    if (expect) req.flushHeaders();
    else req.end();
  });
}

/** The same over HTTP/2 on an open session. */
function request2(session: http2.ClientHttp2Session, path: string, method: string, expect?: string): Promise<Answer> {
  return new Promise((resolve) => {
    const headers: http2.OutgoingHttpHeaders = { ':method': method, ':path': path };
    if (expect) headers.expect = expect;
    const stream = session.request(headers, { endStream: !expect });
    const answer: Answer = { status: 0, text: '', interim: [], sentBody: false };
    stream.on('headers', (headers) => answer.interim.push({ status: Number(headers[':status']), headers }));
    stream.on('continue', () => {
      answer.sentBody = true;
      stream.end(BODY);
    });
    stream.on('response', (headers) => (answer.status = Number(headers[':status'])));
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => (answer.text += chunk));
    stream.on('error', () => undefined);
    stream.on('close', () => resolve(answer));
    // The answer is whole; a refused body's stream is reset (NO_ERROR) by the edge anyway.
    stream.on('end', () => stream.destroy());
  });
}

describe('interim responses and expectations, as the origin meant them', () => {
  const system = semanticsSuite();

  /** Runs `exchange` and returns its answer with the bytes the origin received meanwhile. */
  async function counted(exchange: () => Promise<Answer>): Promise<Answer & { originBytes: number }> {
    const before = system.origin.received;
    const answer = await exchange();
    return { ...answer, originBytes: system.origin.received - before };
  }

  describe('HTTP/1.1 visitor', () => {
    const port = (): number => system.server.httpPort;

    for (const [path, status] of [
      ['/expect/refuse', 417],
      ['/expect/too-large', 413],
    ] as const) {
      it(`lets the origin refuse Expect: 100-continue with ${status}; the body is never sent`, HANG, async () => {
        const answer = await counted(() => request1(port(), system.agent.hostname, path, 'PUT', '100-continue'));
        assert.equal(answer.status, status);
        assert.equal(answer.text, 'refused\n');
        assert.deepEqual(answer.interim, []);
        assert.equal(answer.sentBody, false);
        assert.ok(answer.originBytes < HEAD_ROOM, `the origin received ${answer.originBytes} bytes`);
        assert.equal(system.origin.requests.at(-1)?.expect, '100-continue');
      });
    }

    it("passes the origin's 100 Continue, then the body", HANG, async () => {
      const answer = await counted(() => request1(port(), system.agent.hostname, '/expect/accept', 'PUT', '100-continue'));
      assert.equal(answer.sentBody, true);
      assert.equal(answer.status, 200);
      assert.equal(answer.text, `read ${BODY.length}\n`);
      assert.equal(system.origin.requests.at(-1)?.expect, '100-continue');
      assert.ok(answer.originBytes >= BODY.length);
    });

    it('answers 417 itself for an expectation other than 100-continue', HANG, async () => {
      const seen = system.origin.requests.length;
      const answer = await request1(port(), system.agent.hostname, '/expect/accept', 'PUT', 'something-else');
      assert.equal(answer.status, 417);
      assert.equal(system.origin.requests.length, seen);
    });

    it('passes 103 Early Hints with their Link before the answer (the lean path)', HANG, async () => {
      const answer = await request1(port(), system.agent.hostname, '/hints', 'GET');
      assert.deepEqual(
        answer.interim.map((info) => [info.status, info.headers.link]),
        [[103, LINK_HINT]],
      );
      assert.equal(answer.status, 200);
      assert.equal(answer.text, 'hinted\n');
    });

    it('sends no 1xx to an HTTP/1.0 visitor, which would read it as the final answer', HANG, async () => {
      const host = `${system.agent.hostname}:${port()}`;
      const result = await rawExchange(port(), `GET /hints HTTP/1.0\r\nHost: ${host}\r\n\r\n`);
      assert.deepEqual(result.statuses, [200]);
      assert.match(result.text, /\r\n\r\nhinted\n$/);
    });
  });

  it('with an agent too old to relay a 100, answers 100 Continue itself and keeps Expect from it', HANG, async () => {
    const seen: RequestHead[] = [];
    const old = await startHostileAgent(
      system.server.url,
      system.server.token!,
      (stream, head) => {
        seen.push(head);
        let length = 0;
        stream.on('data', (chunk: Buffer) => (length += chunk.length));
        stream.on('end', () => {
          stream.sendHeaders({ s: 200, h: ['content-type', 'text/plain'] });
          stream.end(`read ${length}\n`);
        });
      },
      [],
    );
    try {
      const answer = await request1(system.server.httpPort, old.hostname, '/old', 'PUT', '100-continue');
      assert.equal(answer.sentBody, true);
      assert.equal(answer.status, 200);
      assert.equal(answer.text, `read ${BODY.length}\n`);
      const names = seen[0]!.h.filter((_, index) => index % 2 === 0).map((name) => name.toLowerCase());
      assert.ok(!names.includes('expect'));
      assert.equal(seen[0]!.i, 1); // the edge still takes INFO; the agent just never sends one
    } finally {
      old.close();
    }
  });

  describe('HTTP/2 visitor', () => {
    const h2 = h2VisitorSuite(system);

    it('lets the origin refuse Expect: 100-continue; the body is never sent', HANG, async () => {
      const answer = await counted(() => request2(h2.session, '/expect/refuse', 'PUT', '100-continue'));
      assert.equal(answer.status, 417);
      assert.equal(answer.text, 'refused\n');
      assert.equal(answer.sentBody, false);
      assert.ok(answer.originBytes < HEAD_ROOM, `the origin received ${answer.originBytes} bytes`);
    });

    it("passes the origin's 100 Continue, then the body", HANG, async () => {
      const answer = await request2(h2.session, '/expect/accept', 'PUT', '100-continue');
      assert.equal(answer.sentBody, true);
      assert.equal(answer.status, 200);
      assert.equal(answer.text, `read ${BODY.length}\n`);
      assert.equal(system.origin.requests.at(-1)?.expect, '100-continue');
    });

    it('passes 103 Early Hints with their Link before the answer', HANG, async () => {
      const answer = await request2(h2.session, '/hints', 'GET');
      assert.deepEqual(
        answer.interim.map((info) => [info.status, info.headers.link]),
        [[103, LINK_HINT]],
      );
      assert.equal(answer.status, 200);
      assert.equal(answer.text, 'hinted\n');
    });
  });
});
