import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import http2 from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { sign as signGithub } from '@octokit/webhooks-methods';
import Stripe from 'stripe';
import { startAgent, startOrigin, startServer, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { h2Request, h2Session } from './harness/h2-visitor.js';
import { closedPort } from './harness/pool-support.js';
import { send, type Echo } from './harness/policy-support.js';

const run = promisify(execFile);

// Webhook signatures checked at the edge, signed by each provider's own package: a pass reaches
// the local service with its body unchanged, a failure never does and gets 403 naming the reason,
// a body over the bound gets 413; on HTTP/1.1 and HTTP/2, and through a pool retry.
describe('webhook checks over HTTP/1.1, HTTP/2, 100 Continue and pool retries', () => {
  const GITHUB_SECRET = 'It’s a Secret to Everybody';
  const STRIPE_SECRET = 'whsec_test_secret_0123456789';
  const BODY = JSON.stringify({ action: 'opened', number: 1, text: 'é'.repeat(100) });
  let server: TestServer;
  let origin: TestOrigin;
  let github: TestAgent;
  let stripe: TestAgent;
  const pool: TestAgent[] = [];

  before(async () => {
    server = await startServer();
    origin = await startOrigin();
    github = await startAgent(server, {
      token: server.token,
      target: origin.port,
      args: ['--verify-webhook', `github:${GITHUB_SECRET}`, '--verify-webhook-max-body', '4KiB'],
    });
    stripe = await startAgent(server, { token: server.token, target: origin.port, args: ['--verify-webhook', `stripe:${STRIPE_SECRET}`] });
    // A pool of two: one member's local service is down, so requests picked for it are retried on the other.
    const down = await closedPort();
    for (const target of [down, origin.port]) {
      pool.push(
        await startAgent(server, {
          token: server.token,
          target,
          subdomain: 'hooks',
          args: ['--pool', '--verify-webhook', `github:${GITHUB_SECRET}`],
        }),
      );
    }
  });
  after(async () => {
    await Promise.all(pool.map((agent) => agent.close()));
    await stripe?.close();
    await github?.close();
    await origin?.close();
    await server?.close();
  });

  const sha = (text: string) => createHash('sha256').update(text).digest('hex');

  it('forwards a request signed by @octokit/webhooks-methods unchanged, body included, on HTTP/1.1', async () => {
    const answer = await send(server, github.hostname, 'POST', '/echo?delivery=1', BODY, {
      'x-hub-signature-256': await signGithub(GITHUB_SECRET, BODY),
      'content-type': 'application/json',
    });
    assert.equal(answer.status, 200);
    const echo = JSON.parse(answer.text) as Echo;
    assert.equal(echo.bodySha256, sha(BODY));
    assert.equal(echo.bodyLength, Buffer.byteLength(BODY));
    assert.equal(echo.url, '/echo?delivery=1');
  });

  it('forwards a signed request on HTTP/2 (a chunked body without Content-Length)', async () => {
    const session = h2Session(server, github.hostname);
    try {
      const answer = await h2Request(
        session,
        { ':method': 'POST', ':path': '/echo', 'x-hub-signature-256': await signGithub(GITHUB_SECRET, BODY) },
        BODY,
      );
      assert.equal(answer.status, 200);
      assert.equal((JSON.parse(answer.text) as Echo).bodySha256, sha(BODY));
    } finally {
      session.close();
    }
  });

  it('takes a signed body from curl that waits for 100 Continue', async () => {
    const body = JSON.stringify({ payload: 'c'.repeat(2000) });
    const { stdout } = await run('curl', [
      '-sS',
      '--resolve',
      `${github.hostname}:${server.httpPort}:127.0.0.1`,
      '-H',
      'Expect: 100-continue',
      '-H',
      `X-Hub-Signature-256: ${await signGithub(GITHUB_SECRET, body)}`,
      '--data-binary',
      body,
      `http://${github.hostname}:${server.httpPort}/echo`,
    ]);
    assert.equal((JSON.parse(stdout) as Echo).bodySha256, sha(body));
  });

  it('answers 403 naming the reason, and the local service never sees the request', async () => {
    const seen = origin.seen.length;
    const missing = await send(server, github.hostname, 'POST', '/echo', BODY);
    assert.equal(missing.status, 403);
    assert.match(missing.text, /missing signature/);
    const changed = await send(server, github.hostname, 'POST', '/echo', `${BODY} `, {
      'x-hub-signature-256': await signGithub(GITHUB_SECRET, BODY),
    });
    assert.equal(changed.status, 403);
    assert.match(changed.text, /signature mismatch/);
    const session = h2Session(server, github.hostname);
    try {
      const h2 = await h2Request(session, { ':method': 'POST', ':path': '/echo', 'x-hub-signature-256': 'sha256=00' }, BODY);
      assert.equal(h2.status, 403);
      assert.match(h2.text, /signature mismatch/);
    } finally {
      session.close();
    }
    assert.equal(origin.seen.length, seen);
  });

  it('answers 413 to a body over --verify-webhook-max-body, announced or streamed, before the local service', async () => {
    const big = 'x'.repeat(5000);
    const seen = origin.seen.length;
    const announced = await send(server, github.hostname, 'POST', '/echo', big, {
      'x-hub-signature-256': await signGithub(GITHUB_SECRET, big),
    });
    assert.equal(announced.status, 413);
    const session = h2Session(server, github.hostname);
    try {
      const streamed = await h2Request(
        session,
        { ':method': 'POST', ':path': '/echo', [http2.constants.HTTP2_HEADER_CONTENT_TYPE]: 'text/plain' },
        big,
      );
      assert.equal(streamed.status, 413);
      assert.equal(origin.seen.length, seen);
    } finally {
      session.close();
    }
  });

  it('a 413 that ends a keep-alive connection says Connection: close, and the client goes on over a new one', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const request = (method: string, firstChunk: string | undefined) =>
      new Promise<{ status: number; connection: string | undefined; socket: unknown }>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port: server.httpPort,
            method,
            path: '/echo',
            agent,
            headers: { host: `${github.hostname}:${server.httpPort}` },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, socket: req.socket }));
            // The rest of the body only once the answer is in: the edge refused it mid-way.
            if (firstChunk !== undefined) req.end('y'.repeat(3000));
          },
        );
        req.on('error', reject);
        if (firstChunk === undefined) req.end();
        else req.write(firstChunk);
      });
    try {
      // Chunked and still arriving: the edge cannot read the rest, so the connection ends with the answer.
      const refused = await request('POST', 'x'.repeat(6000));
      assert.equal(refused.status, 413);
      assert.equal(refused.connection, 'close');
      // The next request goes over a new connection, and is checked as any (it is not signed).
      const next = await request('GET', undefined);
      assert.equal(next.status, 403);
      assert.notEqual(next.socket, refused.socket);
    } finally {
      agent.destroy();
    }
  });

  it('checks a Stripe signature made by stripe.webhooks.generateTestHeaderString, refusing a stale timestamp', async () => {
    const header = (timestamp: number) => Stripe.webhooks.generateTestHeaderString({ payload: BODY, secret: STRIPE_SECRET, timestamp });
    const now = Math.floor(Date.now() / 1000);
    const fresh = await send(server, stripe.hostname, 'POST', '/echo', BODY, { 'stripe-signature': header(now) });
    assert.equal(fresh.status, 200);
    assert.equal((JSON.parse(fresh.text) as Echo).bodySha256, sha(BODY));
    const stale = await send(server, stripe.hostname, 'POST', '/echo', BODY, { 'stripe-signature': header(now - 600) });
    assert.equal(stale.status, 403);
    assert.match(stale.text, /timestamp outside tolerance/);
  });

  it('retries a checked request on another pool member with the body it read', async () => {
    const signature = await signGithub(GITHUB_SECRET, BODY);
    for (let i = 0; i < 6; i++) {
      const answer = await send(server, 'hooks.localhost', 'POST', '/echo', BODY, { 'x-hub-signature-256': signature });
      assert.equal(answer.status, 200, answer.text);
      assert.equal((JSON.parse(answer.text) as Echo).bodySha256, sha(BODY));
    }
  });
});
