import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { api, startServer, type TestServer } from './harness/index.js';
import { addWebhook, deliveries, startReceiver, type Receiver } from './harness/webhook-support.js';

// The outbox survives a crash: events queued (their receiver failing) when the server is
// SIGKILLed are all delivered by the restarted server, and none is delivered twice.

const EVENTS = 5;

describe('webhook events queued when the server is killed', () => {
  const servers: TestServer[] = [];
  let receiver: Receiver | undefined;
  after(async () => {
    for (const server of servers.reverse()) await server.close();
    await receiver?.close();
  });

  it('are all delivered after the restart, none twice', async () => {
    const env = { SVC_WEBHOOK_ALLOW_PRIVATE: 'true', SVC_WEBHOOK_RETRY_MS: '300' };
    const first = await startServer({ env });
    servers.push(first);
    receiver = await startReceiver();
    const token = await first.createAccount('crash@example.com', 'pro');
    const hook = await addWebhook(first, token, receiver, ['key.created']);
    // Until the crash, the receiver fails every attempt: the events wait in the outbox.
    let up = false;
    receiver.answer = () => (up ? 200 : 503);
    const keyIds: string[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const created = await api(first, 'POST', '/v1/keys', { token }, { description: `k${i}` });
      assert.equal(created.status, 201);
      keyIds.push((created.body as { id: string }).id);
    }
    const rx = receiver;
    await Promise.all(keyIds.map((id) => rx.next((r) => r.envelope.data.id === id)));
    await first.proc.kill('SIGKILL');

    up = true;
    const second = await startServer({ env, dataDir: first.dataDir, httpPort: first.httpPort, httpsPort: first.httpsPort });
    servers.push(second);
    await Promise.all(keyIds.map((id) => rx.next((r) => r.envelope.data.id === id && r.answered === 200)));

    const counts = rx.deliveredCounts();
    assert.equal(counts.size, EVENTS);
    for (const [id, count] of counts) assert.equal(count, 1, `event ${id} delivered ${count} times`);
    assert.ok(rx.received.every((r) => r.verified));
    const listed = await deliveries(second, token, hook.id);
    assert.equal(listed.length, EVENTS);
    for (const delivery of listed) {
      assert.equal(delivery.state, 'delivered');
      assert.equal(delivery.attempts.at(-1)?.statusCode, 200);
      assert.ok(delivery.attempts.slice(0, -1).every((a) => a.statusCode === 503));
    }
  });
});
