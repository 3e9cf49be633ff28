import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { newId } from './engine/ids.js';
import type { Store } from './store.js';

// The webhooks part of the Store contract (receivers and the outbox), called from inside
// runStoreContract, which owns the store.

/** Registers the webhook and outbox contract tests; `store()` is read inside each test. */
export function runWebhooksContract(store: () => Store): void {
  const unique = (): string => randomBytes(6).toString('hex');
  const account = async (): Promise<string> =>
    (await store().accounts.create({ email: `wh-${unique()}@example.com`, name: 'Hooks', plan: 'free' })).id;
  const event = (accountId: string, dedupeKey?: string) => ({
    id: newId('evt'),
    accountId,
    type: 'key.created',
    body: '{"id":"x"}',
    createdAt: Date.now(),
    dedupeKey,
  });

  describe('webhooks and their outbox', () => {
    it('creates, lists newest first, counts and deletes only the owner’s webhooks', async () => {
      const [a, b] = [await account(), await account()];
      const first = await store().webhooks.create({ accountId: a, url: 'https://one.example/h', events: [], sealedSecret: 'v1.x' });
      const second = await store().webhooks.create({
        accountId: a,
        url: 'https://two.example/h',
        events: ['key.created'],
        sealedSecret: 'v1.y',
      });
      assert.deepEqual((await store().webhooks.listForAccount(a)).map((w) => w.id).sort(), [first.id, second.id].sort());
      assert.deepEqual((await store().webhooks.byId(a, second.id))?.events, ['key.created']);
      assert.equal(await store().webhooks.countForAccount(a), 2);
      assert.equal(await store().webhooks.delete(b, first.id), false, "another account's");
      assert.equal(await store().webhooks.delete(a, first.id), true);
      assert.equal(await store().webhooks.byId(a, first.id), undefined);
    });

    it('queues an event once per dedupe key, with a delivery per webhook', async () => {
      const a = await account();
      const hook = await store().webhooks.create({ accountId: a, url: 'https://h.example/', events: [], sealedSecret: 'v1.x' });
      const key = `usage.threshold:${a}:2026-12:80`;
      assert.equal(await store().webhooks.enqueue(event(a, key), [hook.id]), true);
      assert.equal(await store().webhooks.enqueue(event(a, key), [hook.id]), false, 'a second node queues nothing');
      assert.equal(await store().webhooks.enqueue(event(a), [hook.id]), true);
      const list = await store().webhooks.deliveries(hook.id, 10);
      assert.equal(list.length, 2);
      assert.ok(list.every((d) => d.state === 'pending' && d.attempts === 0 && d.attemptList.length === 0));
    });

    it('leases a due delivery to exactly one of several racing nodes, and records the outcome only for the holder', async () => {
      const a = await account();
      const hook = await store().webhooks.create({ accountId: a, url: 'https://h.example/', events: [], sealedSecret: 'v1.s' });
      const queued = event(a);
      await store().webhooks.enqueue(queued, [hook.id]);
      const [delivery] = await store().webhooks.deliveries(hook.id, 1);
      const now = Date.now() + 1000;
      const nodes = ['n1', 'n2', 'n3', 'n4'];
      const claims = await Promise.all(nodes.map((node) => store().webhooks.claim(delivery!.id, node, now, now + 30_000)));
      assert.equal(claims.filter((c) => c !== undefined).length, 1);
      const holder = nodes[claims.findIndex((c) => c !== undefined)]!;
      const loser = nodes.find((n) => n !== holder)!;
      const job = claims.find((c) => c !== undefined)!;
      assert.equal(job.body, queued.body);
      assert.equal(job.sealedSecret, 'v1.s');
      assert.equal(job.url, 'https://h.example/');
      const outcome = {
        attemptedAt: now,
        statusCode: 500,
        error: undefined,
        durationMs: 12,
        state: 'pending' as const,
        nextAttemptAt: now + 5000,
      };
      assert.equal(await store().webhooks.finish(job.id, loser, outcome), false, 'not the lease holder');
      assert.equal(await store().webhooks.finish(job.id, holder, outcome), true);
      assert.equal((await store().webhooks.due(now, 100)).includes(job.id), false, 'not due before its retry');
      assert.equal(await store().webhooks.claim(job.id, 'n1', now, now + 30_000), undefined);
      const [after] = await store().webhooks.deliveries(hook.id, 1);
      assert.equal(after?.attempts, 1);
      assert.equal(after?.attemptList[0]?.statusCode, 500);
      assert.equal(await store().webhooks.retry(hook.id, job.id, now), true);
      assert.ok((await store().webhooks.due(now, 100)).includes(job.id));
    });

    it('lets a restarted node take back its own leases at once', async () => {
      const a = await account();
      const hook = await store().webhooks.create({ accountId: a, url: 'https://h.example/', events: [], sealedSecret: 'v1.s' });
      await store().webhooks.enqueue(event(a), [hook.id]);
      const [delivery] = await store().webhooks.deliveries(hook.id, 1);
      const now = Date.now() + 1000;
      const node = `node-${unique()}`;
      assert.ok(await store().webhooks.claim(delivery!.id, node, now, now + 60_000));
      assert.ok(!(await store().webhooks.due(now, 1000)).includes(delivery!.id), 'leased');
      assert.equal(await store().webhooks.releaseLeases(node), 1);
      assert.ok((await store().webhooks.due(now, 1000)).includes(delivery!.id));
    });

    it('drops a deleted webhook’s deliveries with it', async () => {
      const a = await account();
      const hook = await store().webhooks.create({ accountId: a, url: 'https://h.example/', events: [], sealedSecret: 'v1.s' });
      await store().webhooks.enqueue(event(a), [hook.id]);
      assert.equal(await store().webhooks.delete(a, hook.id), true);
      assert.deepEqual(await store().webhooks.deliveries(hook.id, 10), []);
      assert.equal((await store().webhooks.lastDeliveries(a)).size, 0);
    });
  });
}
