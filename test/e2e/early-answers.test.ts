import assert from 'node:assert/strict';
import http from 'node:http';
import type http2 from 'node:http2';
import { describe, it } from 'node:test';
import { edgeUrl, loopbackLookup, visit } from './harness/index.js';
import { MiB, openStreams } from './harness/data-path-support.js';
import { h2VisitorSuite, semanticsSuite } from './harness/semantics-origin.js';

/** The upload the origin never reads. */
const UPLOAD = 64 * MiB;
const CHUNK = Buffer.alloc(256 * 1024, 0x61);
/** Bounds a hung test; not a timing assertion. */
const HANG = { timeout: 60_000 };

interface Outcome {
  status: number;
  text: string;
  /** Body bytes the visitor's client took before it learned it could stop. */
  written: number;
  /** HTTP/2 only: the code of the RST_STREAM that closed the stream (0 = NO_ERROR). */
  rstCode?: number;
}

/**
 * An HTTP/1.1 PUT of UPLOAD bytes that goes on sending after the answer, as a client that does
 * not watch for one would, until the edge closes the connection or takes the whole body. Over
 * a keep-alive agent: without one, Node's client closes the connection itself after the answer.
 */
function put1(port: number, hostname: string, path: string): Promise<Outcome> {
  const keepAlive = new http.Agent({ keepAlive: true });
  return new Promise<Outcome>((resolve, reject) => {
    const req = http.request(`http://${hostname}:${port}${path}`, {
      method: 'PUT',
      headers: { 'content-length': String(UPLOAD) },
      lookup: loopbackLookup,
      agent: keepAlive,
    });
    let written = 0;
    let answer: { status: number; text: string } | undefined;
    let closed = false;
    const settle = (): void => {
      if (answer && closed) resolve({ ...answer, written });
    };
    const pump = (): void => {
      while (!closed && written < UPLOAD) {
        written += CHUNK.length;
        if (!req.write(CHUNK)) return void req.once('drain', pump);
      }
      if (written >= UPLOAD) req.end();
    };
    req.on('error', (error) => {
      if (!answer) reject(error);
    });
    req.on('close', () => {
      closed = true;
      settle();
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        answer = { status: res.statusCode ?? 0, text };
        // A whole upload taken by the edge ends the exchange; so does the edge closing.
        if (req.writableFinished) req.destroy();
        settle();
      });
    });
    req.on('finish', () => {
      if (answer) req.destroy();
    });
    pump();
  }).finally(() => keepAlive.destroy());
}

/** The same PUT over HTTP/2, on an open session. */
function put2(session: http2.ClientHttp2Session, path: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const stream = session.request({ ':method': 'PUT', ':path': path, 'content-length': String(UPLOAD) });
    let written = 0;
    let status = 0;
    let text = '';
    const pump = (): void => {
      while (!stream.closed && written < UPLOAD) {
        written += CHUNK.length;
        if (!stream.write(CHUNK)) return void stream.once('drain', pump);
      }
      if (written >= UPLOAD && !stream.closed) stream.end();
    };
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => (text += chunk));
    stream.on('error', () => undefined);
    let ended = false;
    let aborted = false;
    const done = (): void => resolve({ status, text, written, rstCode: stream.rstCode });
    stream.on('close', done);
    // Node's client does not close a stream reset with NO_ERROR while writes are still queued
    // on it; once the answer is whole and the reset ('aborted') received, the exchange is over.
    const settle = (): void => {
      if (!ended || !aborted) return;
      done();
      stream.destroy();
    };
    stream.on('aborted', () => {
      aborted = true;
      settle();
    });
    stream.on('end', () => {
      ended = true;
      settle();
    });
    pump();
  });
}

describe('an origin that answers before it reads the body', () => {
  const system = semanticsSuite();

  describe('HTTP/1.1 visitor', () => {
    it('gets an early 200 and is not made to send the rest of 64 MiB', HANG, async () => {
      const outcome = await put1(system.server.httpPort, system.agent.hostname, '/early');
      assert.equal(outcome.status, 200);
      assert.equal(outcome.text, 'early\n');
      // The edge stopped taking the body: the visitor could not push the whole upload through.
      assert.ok(outcome.written < UPLOAD, `the visitor sent all ${outcome.written} bytes`);
      assert.equal(await openStreams(system.server), 0);
      assert.equal((await visit(system.server, system.agent.hostname, '/after')).text, 'read 0\n');
    });

    it('gets the origin 413 with Connection: close every time, never a 502', HANG, async () => {
      for (let attempt = 0; attempt < 10; attempt++) {
        const outcome = await put1(system.server.httpPort, system.agent.hostname, '/too-large');
        assert.deepEqual([outcome.status, outcome.text], [413, 'too large\n'], `attempt ${attempt}`);
      }
      assert.equal(await openStreams(system.server), 0);
      assert.equal((await visit(system.server, system.agent.hostname, '/after')).text, 'read 0\n');
    });

    it('keeps the connection for a small unread body', HANG, async () => {
      // Two requests on one keep-alive connection: the 10-byte body the origin ignored is drained.
      const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const url = edgeUrl(system.server, system.agent.hostname, '/early');
        const sockets = new Set<unknown>();
        for (let i = 0; i < 2; i++) {
          const text = await new Promise<string>((resolve, reject) => {
            const req = http.request(url, { method: 'POST', agent: keepAlive, lookup: loopbackLookup }, (res) => {
              sockets.add(res.socket);
              let body = '';
              res.on('data', (chunk: Buffer) => (body += chunk.toString()));
              res.on('end', () => resolve(body));
            });
            req.on('error', reject);
            req.end('0123456789');
          });
          assert.equal(text, 'early\n');
        }
        assert.equal(sockets.size, 1);
      } finally {
        keepAlive.destroy();
      }
    });
  });

  describe('HTTP/2 visitor', () => {
    const h2 = h2VisitorSuite(system);

    it('gets an early 200, then RST_STREAM NO_ERROR instead of reading 64 MiB', HANG, async () => {
      const outcome = await put2(h2.session, '/early');
      assert.equal(outcome.status, 200);
      assert.equal(outcome.text, 'early\n');
      assert.equal(outcome.rstCode, 0); // NO_ERROR, before the upload ended
      assert.ok(outcome.written < UPLOAD, `the visitor sent all ${outcome.written} bytes`);
      assert.equal(await openStreams(system.server), 0);
      // The same session, and the tunnel, carry on.
      const next = await put2(h2.session, '/early');
      assert.equal(next.status, 200);
    });

    it('gets the origin 413 with Connection: close every time', HANG, async () => {
      for (let attempt = 0; attempt < 10; attempt++) {
        const outcome = await put2(h2.session, '/too-large');
        assert.deepEqual([outcome.status, outcome.text], [413, 'too large\n'], `attempt ${attempt}`);
        assert.ok(outcome.written < UPLOAD, `the visitor sent all ${outcome.written} bytes`);
      }
      assert.equal((await visit(system.server, system.agent.hostname, '/after')).text, 'read 0\n');
    });
  });
});
