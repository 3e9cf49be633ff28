import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { retryDelay } from './dispatcher.js';
import { SecretBox, deriveWebhookKey } from './secret-box.js';
import { send } from './sender.js';
import { newSigningSecret, signatureHeaders } from './signing.js';

// The sender against a real receiver on loopback: the connect-time address check (the defence
// against DNS rebinding), no redirects followed, the timeout, and signatures the reference
// package accepts.

describe('send', () => {
  let server: http.Server;
  let port: number;
  const seen: { url: string | undefined; headers: http.IncomingHttpHeaders; body: string }[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => (body += c));
      req.on('end', () => {
        seen.push({ url: req.url, headers: req.headers, body });
        if (req.url === '/redirect') res.writeHead(302, { location: '/ok' }).end();
        else if (req.url === '/slow') setTimeout(() => res.end(), 2000).unref();
        else res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('refuses at connect time a host name that resolves to loopback, sending nothing', async () => {
    const before = seen.length;
    const result = await send(`http://localhost:${port}/ok`, {}, '{}', { timeoutMs: 5000, allowPrivate: false });
    assert.equal(result.statusCode, undefined);
    assert.match(result.error ?? '', /^refused: localhost resolves to (127\.0\.0\.1|::1), a private address$/);
    assert.equal(seen.length, before);
  });

  it('refuses a private IP literal, sending nothing', async () => {
    const result = await send(`http://127.0.0.1:${port}/ok`, {}, '{}', { timeoutMs: 5000, allowPrivate: false });
    assert.equal(result.error, 'refused: 127.0.0.1 is a private address');
  });

  it('refuses IPv6 literals that embed a private IPv4, in the hex spelling URLs store', async () => {
    for (const [url, host] of [
      ['https://[::127.0.0.1]/', '::7f00:1'],
      ['https://[64:ff9b::127.0.0.1]/', '64:ff9b::7f00:1'],
      ['https://[::ffff:10.0.0.1]/', '::ffff:a00:1'],
      ['https://[2002:7f00:1::]/', '2002:7f00:1::'],
    ] as const) {
      const result = await send(url, {}, '{}', { timeoutMs: 5000, allowPrivate: false });
      assert.equal(result.error, `refused: ${host} is a private address`, url);
    }
  });

  it('delivers a signed body the standardwebhooks package verifies', async () => {
    const secret = newSigningSecret();
    const body = JSON.stringify({ id: 'evt_x', type: 'key.created', createdAt: new Date().toISOString(), data: {} });
    const result = await send(`http://localhost:${port}/ok`, signatureHeaders(secret, 'evt_x', body, Date.now()), body, {
      timeoutMs: 5000,
      allowPrivate: true,
    });
    assert.equal(result.statusCode, 204);
    const got = seen.at(-1)!;
    assert.equal(got.headers['content-type'], 'application/json');
    assert.doesNotThrow(() => new Webhook(secret).verify(got.body, got.headers as Record<string, string>));
  });

  it('does not follow a redirect: the 3xx is the outcome', async () => {
    const before = seen.length;
    const result = await send(`http://127.0.0.1:${port}/redirect`, {}, '{}', { timeoutMs: 5000, allowPrivate: true });
    assert.equal(result.statusCode, 302);
    assert.equal(seen.length, before + 1);
  });

  it('gives up on a receiver that does not answer in time', async () => {
    const result = await send(`http://127.0.0.1:${port}/slow`, {}, '{}', { timeoutMs: 200, allowPrivate: true });
    assert.equal(result.error, 'no answer within 200 ms');
  });
});

describe('retryDelay', () => {
  const schedule = [5_000, 30_000, 120_000, 600_000, 3_600_000];
  it('follows the schedule with ±20% jitter, then repeats its last step', () => {
    assert.equal(
      retryDelay(schedule, 1, () => 0.5),
      5_000,
    );
    assert.equal(
      retryDelay(schedule, 2, () => 0),
      24_000,
    );
    assert.equal(
      retryDelay(schedule, 3, () => 1),
      144_000,
    );
    assert.equal(
      retryDelay(schedule, 9, () => 0.5),
      3_600_000,
    );
  });
});

describe('SecretBox', () => {
  it('opens what it sealed, and nothing sealed under another key', () => {
    const box = new SecretBox(deriveWebhookKey('cluster-secret-0123456789'));
    const sealed = box.seal('whsec_abc');
    assert.ok(!sealed.includes('whsec_abc'));
    assert.equal(box.open(sealed), 'whsec_abc');
    assert.notEqual(box.seal('whsec_abc'), sealed, 'a fresh IV each time');
    assert.throws(() => new SecretBox(deriveWebhookKey('another-secret-0123456789')).open(sealed));
  });
});
