import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { api, startAgent, startOrigin, startServer, visit, type TestOrigin, type TestServer } from './harness/index.js';
import { ApiClient, verifyWebhook } from '@svcrouter/sdk';
import { addWebhook, deliveries, startReceiver, type Receiver } from './harness/webhook-support.js';

// Signed webhooks end to end: a real server, real agents and a real receiver on loopback that
// verifies every delivery with the `standardwebhooks` package. Each event is made to happen.

const GRACE_MS = 400;
const QUOTA = 200_000;

describe('signed webhooks', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let receiver: Receiver;
  let token: string;
  let webhookId: string;

  before(async () => {
    server = await startServer({
      env: {
        SVC_WEBHOOK_ALLOW_PRIVATE: 'true',
        SVC_NAME_GRACE_MS: String(GRACE_MS),
        SVC_WEBHOOK_RETRY_MS: '100',
        SVC_PLANS: JSON.stringify({ free: { bandwidthBytes: QUOTA } }),
      },
    });
    origin = await startOrigin();
    receiver = await startReceiver();
    token = await server.createAccount('hooks@example.com', 'free');
    webhookId = (await addWebhook(server, token, receiver)).id;
  });
  after(async () => {
    await origin?.close();
    await receiver?.close();
    await server?.close();
  });

  it('answers 201 with the secret once, lists the webhook without it, and states the plan limit', async () => {
    const list = await api(server, 'GET', '/v1/webhooks', { token });
    assert.equal(list.status, 200);
    const hooks = (list.body as { webhooks: Record<string, unknown>[] }).webhooks;
    assert.equal(hooks.length, 1);
    assert.equal(hooks[0]!.id, webhookId);
    assert.deepEqual(hooks[0]!.events, []);
    assert.ok(!('secret' in hooks[0]!));
    assert.match(receiver.secret ?? '', /^whsec_[A-Za-z0-9+/]+=*$/);

    const other = await startReceiver();
    try {
      const second = await addWebhook(server, token, other, ['key.created']);
      assert.deepEqual(second.events, ['key.created']);
      const third = await api(server, 'POST', '/v1/webhooks', { token }, { url: other.url });
      assert.equal(third.status, 403);
      assert.equal((third.body as { error: string }).error, 'webhook_limit');
      assert.match((third.body as { message: string }).message, /free plan allows 2 webhooks/);
      const badType = await api(server, 'POST', '/v1/webhooks', { token }, { url: other.url, events: ['tunnel.exploded'] });
      assert.equal(badType.status, 400);
      assert.equal((await api(server, 'DELETE', `/v1/webhooks/${second.id}`, { token })).status, 204);
      assert.equal((await api(server, 'DELETE', `/v1/webhooks/${second.id}`, { token })).status, 404);
    } finally {
      await other.close();
    }
  });

  it('sends key.created and key.revoked with the key as the API shows it', async () => {
    const created = await api(server, 'POST', '/v1/keys', { token }, { description: 'ci' });
    assert.equal(created.status, 201);
    const key = created.body as { id: string; token: string };
    const got = await receiver.next((r) => r.type === 'key.created' && r.envelope.data.id === key.id);
    assert.equal(got.verified, true);
    assert.equal(got.envelope.data.description, 'ci');
    // The SDK's helper accepts what the standardwebhooks package accepted.
    assert.equal(verifyWebhook(receiver.secret!, got.raw.body, got.raw.headers).id, got.id);
    assert.ok(!JSON.stringify(got.envelope).includes(key.token), 'the token itself is never sent');
    assert.equal((await api(server, 'DELETE', `/v1/keys/${key.id}`, { token })).status, 204);
    const revoked = await receiver.next((r) => r.type === 'key.revoked' && r.envelope.data.id === key.id);
    assert.equal(revoked.verified, true);
  });

  it('sends tunnel.online, and tunnel.offline only once the grace period passed without a reconnect', async () => {
    const agent = await startAgent(server, { token, target: origin.port, subdomain: 'hooked' });
    const online = await receiver.next((r) => r.type === 'tunnel.online' && r.envelope.data.host === agent.hostname);
    assert.equal(online.verified, true);
    assert.equal(online.envelope.data.status, 'online');
    assert.match(String(online.envelope.data.url), /^https:\/\/hooked\.localhost/);

    const killedAt = Date.now();
    await agent.proc.kill('SIGKILL');
    const offline = await receiver.next((r) => r.type === 'tunnel.offline' && r.envelope.data.host === agent.hostname);
    assert.equal(offline.verified, true);
    assert.equal(offline.envelope.data.status, 'offline');
    assert.equal(offline.envelope.data.id, online.envelope.data.id);
    assert.ok(Date.parse(offline.envelope.createdAt) - killedAt >= GRACE_MS, 'sent after the grace period, not at the drop');
  });

  it('sends tunnel.offline at once when the tunnel is deleted through the API', async () => {
    const agent = await startAgent(server, { token, target: origin.port, subdomain: 'deleted-hook' });
    const online = await receiver.next((r) => r.type === 'tunnel.online' && r.envelope.data.host === agent.hostname);
    const deletedAt = Date.now();
    const id = String(online.envelope.data.id);
    assert.equal((await api(server, 'DELETE', `/v1/tunnels/${id}`, { token })).status, 204);
    const offline = await receiver.next((r) => r.type === 'tunnel.offline' && r.envelope.data.id === id);
    assert.equal(offline.verified, true);
    assert.ok(Date.parse(offline.envelope.createdAt) - deletedAt < GRACE_MS, 'sent at the deletion, not after a grace period');
    await agent.proc.exited;
  });

  it('sends usage.threshold once at 80% and once at 100% of the transfer quota', async () => {
    const agent = await startAgent(server, { token, target: origin.port });
    try {
      const first = await visit(server, agent.hostname, `/bytes?n=${Math.round(QUOTA * 0.85)}`);
      assert.equal(first.status, 200);
      const at80 = await receiver.next((r) => r.type === 'usage.threshold' && r.envelope.data.threshold === 80);
      assert.equal(at80.verified, true);
      assert.equal((at80.envelope.data.limits as { bandwidthBytes: number }).bandwidthBytes, QUOTA);
      assert.ok((at80.envelope.data.used as { bandwidthBytes: number }).bandwidthBytes >= QUOTA * 0.8);
      // This transfer crosses the quota: the edge cuts it, so the visitor may see a reset.
      await visit(server, agent.hostname, `/bytes?n=${Math.round(QUOTA * 0.3)}`).catch(() => undefined);
      const at100 = await receiver.next((r) => r.type === 'usage.threshold' && r.envelope.data.threshold === 100);
      assert.equal(at100.verified, true);
      // More traffic (refused now) sends no third event.
      await visit(server, agent.hostname, '/');
      const usage = await api(server, 'GET', '/v1/usage', { token });
      assert.ok((usage.body as { used: { bandwidthBytes: number } }).used.bandwidthBytes >= QUOTA);
      assert.equal(receiver.received.filter((r) => r.type === 'usage.threshold').length, 2);
    } finally {
      await agent.close();
    }
  });

  it('delivers every event once, each verified, and lists each attempt with its status and duration', async () => {
    assert.ok(receiver.received.length >= 6);
    assert.ok(
      receiver.received.every((r) => r.verified),
      'every signature verifies',
    );
    for (const [id, count] of receiver.deliveredCounts()) assert.equal(count, 1, `event ${id} delivered ${count} times`);
    const list = await deliveries(server, token, webhookId);
    const byEvent = new Map(list.map((d) => [d.eventId, d]));
    for (const r of receiver.received) {
      const delivery = byEvent.get(r.id);
      assert.ok(delivery, `delivery of ${r.id} listed`);
      assert.equal(delivery.eventType, r.type);
      assert.equal(delivery.state, 'delivered');
      assert.equal(delivery.attempts.at(-1)?.statusCode, 200);
      assert.ok(delivery.attempts.every((a) => a.durationMs >= 0 && !Number.isNaN(Date.parse(a.at))));
    }
    // The SDK's client reads the same.
    const client = new ApiClient({ baseUrl: server.url, token });
    const [hook] = await client.webhooks.list();
    assert.equal(hook?.lastDelivery?.state, 'delivered');
    assert.equal((await client.webhooks.deliveries(webhookId, { limit: 1 })).length, 1);
  });

  it('retries a receiver that answers 500, delivers once, and resends on request with the same id', async () => {
    const flaky = await startReceiver();
    try {
      const other = await server.createAccount('flaky@example.com', 'free');
      const hook = await addWebhook(server, other, flaky, ['key.created']);
      flaky.answer = (_envelope, seen) => (seen === 0 ? 500 : 200);
      const created = (await api(server, 'POST', '/v1/keys', { token: other }, {})).body as { id: string };
      const ok = await flaky.next((r) => r.type === 'key.created' && r.answered === 200);
      assert.equal(ok.envelope.data.id, created.id);
      assert.deepEqual(
        flaky.received.map((r) => r.answered),
        [500, 200],
      );
      const [delivery] = await deliveries(server, other, hook.id);
      assert.equal(delivery?.state, 'delivered');
      assert.deepEqual(
        delivery?.attempts.map((a) => a.statusCode),
        [500, 200],
      );

      const resent = await api(server, 'POST', `/v1/webhooks/${hook.id}/deliveries/${delivery!.id}/retry`, { token: other });
      assert.equal(resent.status, 204);
      await flaky.next((r) => r !== ok && r.id === ok.id && r.answered === 200);
      assert.ok(flaky.received.every((r) => r.verified));
      const unknown = await api(server, 'POST', `/v1/webhooks/${hook.id}/deliveries/msg_nope/retry`, { token: other });
      assert.equal(unknown.status, 404);
      // Another account's webhook is not found.
      assert.equal((await api(server, 'GET', `/v1/webhooks/${hook.id}/deliveries`, { token })).status, 404);
    } finally {
      await flaky.close();
    }
  });
});

describe('webhook receivers on private addresses', () => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await startServer();
    token = server.token!;
  });
  after(async () => {
    await server?.close();
  });

  for (const [url, code] of [
    ['http://example.com/hooks', 'webhook_url_invalid'],
    ['https://127.0.0.1:9/hooks', 'webhook_url_private'],
    ['https://localhost/hooks', 'webhook_url_private'],
    ['https://[::1]/hooks', 'webhook_url_private'],
    ['https://10.1.2.3/hooks', 'webhook_url_private'],
    ['https://169.254.169.254/latest/meta-data', 'webhook_url_private'],
    ['https://[::ffff:192.168.0.1]/hooks', 'webhook_url_private'],
    ['https://[::127.0.0.1]/hooks', 'webhook_url_private'],
    ['https://[64:ff9b::7f00:1]/hooks', 'webhook_url_private'],
    ['https://[64:ff9b::10.0.0.1]/hooks', 'webhook_url_private'],
    ['https://[2002:a9fe:a9fe::1]/hooks', 'webhook_url_private'],
    ['https://no-such-receiver.invalid/hooks', 'webhook_url_unresolvable'],
  ] as const) {
    it(`refuses ${url} (${code}) unless SVC_WEBHOOK_ALLOW_PRIVATE=true`, async () => {
      const answer = await api(server, 'POST', '/v1/webhooks', { token }, { url });
      assert.equal(answer.status, 400, answer.text);
      assert.equal((answer.body as { error: string }).error, code);
    });
  }
});

describe('a connection blip shorter than the name grace period', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let receiver: Receiver;
  let relay: net.Server;
  const sockets = new Set<net.Socket>();

  before(async () => {
    server = await startServer({ env: { SVC_WEBHOOK_ALLOW_PRIVATE: 'true', SVC_NAME_GRACE_MS: '30000' } });
    origin = await startOrigin();
    receiver = await startReceiver();
    // The agent reaches the edge through this relay, so the test can cut its connection.
    relay = net.createServer((inbound) => {
      const outbound = net.connect(server.httpPort, '127.0.0.1');
      for (const s of [inbound, outbound]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => undefined);
      }
      inbound.pipe(outbound).pipe(inbound);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => relay?.close(() => resolve()));
    await origin?.close();
    await receiver?.close();
    await server?.close();
  });

  it('sends neither tunnel.offline nor a second tunnel.online; the clean exit after it sends tunnel.offline at once', async () => {
    const token = server.token!;
    await addWebhook(server, token, receiver, ['tunnel.online', 'tunnel.offline']);
    const via = { url: `http://localhost:${(relay.address() as net.AddressInfo).port}` };
    const agent = await startAgent(via, { token, target: origin.port, subdomain: 'blip' });
    await receiver.next((r) => r.type === 'tunnel.online');
    for (const s of sockets) s.destroy();
    await agent.proc.waitForLine(/^Reconnected: forwarding /);
    assert.equal((await visit(server, agent.hostname, '/')).text, 'hello from origin');
    assert.equal((await agent.close()).code, 0);
    const offline = await receiver.next((r) => r.type === 'tunnel.offline');
    assert.equal(offline.envelope.data.host, agent.hostname);
    assert.deepEqual(
      receiver.received.map((r) => r.type),
      ['tunnel.online', 'tunnel.offline'],
    );
  });
});
