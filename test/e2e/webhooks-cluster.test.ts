import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freshDatabase, startNode, type TestDatabase, postgresSuite } from './harness/cluster-support.js';
import { api, startAgent, startOrigin, type TestOrigin, type TestServer } from './harness/index.js';
import { addWebhook, startReceiver, type Receiver } from './harness/webhook-support.js';

// Two svc-server nodes on one real PostgreSQL, both dispatching the shared outbox: every event,
// whichever node saw it, reaches the receiver exactly once.

postgresSuite('webhook cluster suite', clusterSuite);

function clusterSuite(url: string): void {
  describe('webhooks on two nodes sharing PostgreSQL', () => {
    let database: TestDatabase;
    let a: TestServer;
    let b: TestServer;
    let origin: TestOrigin;
    let receiver: Receiver;
    const env = { SVC_WEBHOOK_ALLOW_PRIVATE: 'true', SVC_NAME_GRACE_MS: '300', SVC_WEBHOOK_RETRY_MS: '200' };

    before(async () => {
      database = await freshDatabase(url);
      a = await startNode(database.url, 'node-a', { first: true, env });
      b = await startNode(database.url, 'node-b', { env });
      origin = await startOrigin();
      receiver = await startReceiver();
    });
    after(async () => {
      await b?.close();
      await a?.close();
      await origin?.close();
      await receiver?.close();
      await database?.drop();
    });

    it('delivers each event once, whichever node queued it', async () => {
      const token = a.token!;
      await addWebhook(a, token, receiver);
      // Every third answer fails, so retries (claimed again by either node) are part of the run.
      receiver.answer = (_envelope, seen) => (seen === 0 && receiver.received.length % 3 === 0 ? 500 : 200);
      const keyIds: string[] = [];
      for (let i = 0; i < 10; i++) {
        const node = i % 2 === 0 ? a : b;
        const created = await api(node, 'POST', '/v1/keys', { token }, { description: `node ${i % 2}` });
        assert.equal(created.status, 201, created.text);
        keyIds.push((created.body as { id: string }).id);
      }
      const agent = await startAgent(b, { token, target: origin.port, subdomain: 'clustered' });
      await receiver.next((r) => r.type === 'tunnel.online' && r.answered === 200);
      await agent.proc.kill('SIGKILL');
      await receiver.next((r) => r.type === 'tunnel.offline' && r.answered === 200);
      await Promise.all(keyIds.map((id) => receiver.next((r) => r.envelope.data.id === id && r.answered === 200)));

      const counts = receiver.deliveredCounts();
      assert.equal(counts.size, keyIds.length + 2);
      for (const [id, count] of counts) assert.equal(count, 1, `event ${id} delivered ${count} times`);
      assert.ok(
        receiver.received.every((r) => r.verified),
        'both nodes sign with the same secret',
      );
      const nodes = await database.query('select distinct node_id from webhook_attempts');
      assert.ok(nodes.length >= 1);
      const events = await database.query('select count(*)::int as n from webhook_events');
      assert.equal(events[0]!.n, keyIds.length + 2, 'each event queued once');
    });
  });
}
