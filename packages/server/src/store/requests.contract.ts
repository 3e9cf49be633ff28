import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { MAX_REQUEST_LIST, MAX_REQUEST_PAGE, type NewRequestRecord } from './requests/request-records.js';
import { PRUNE_CHUNK_ROWS } from './requests/requests-repo.js';
import type { Account, Store } from './store.js';

// RequestRepo part of the Store contract; runStoreContract calls it inside its suite, so
// it runs on every engine against the suite's shared store.

const T0 = 1_750_000_000_000;

/** Registers the inspector-records contract tests. */
export function runRequestsContract(store: () => Store, newAccount: () => Promise<Account>): void {
  const unique = (): string => randomBytes(4).toString('hex');
  const record = (accountId: string, over: Partial<NewRequestRecord> = {}): NewRequestRecord => ({
    accountId,
    tunnelId: 'tun_abc',
    timestamp: T0,
    method: 'GET',
    path: '/',
    status: 200,
    durationMs: 12,
    bytes: 100,
    ip: '203.0.113.9',
    userAgent: 'curl/8',
    proto: 'HTTP/1.1',
    host: 'app.localhost',
    ...over,
  });

  describe('requests', () => {
    it('insertBatch stores every field; list returns them newest first with time-sortable ids', async () => {
      const a = await newAccount();
      const first = record(a.id, { timestamp: T0 + 1, path: '/first', tunnelId: undefined });
      const second = record(a.id, { timestamp: T0 + 2, path: '/second?q=1', status: 502, durationMs: 7.6, bytes: 5_000_000_000 });
      await store().requests.insertBatch([first, second]);
      const list = await store().requests.list(a.id, { limit: 10 });
      assert.deepEqual(
        list.map((r) => r.path),
        ['/second?q=1', '/first'],
      );
      const [newest, oldest] = list;
      assert.match(newest!.id, /^req_[0-9a-f]{28}$/);
      assert.ok(newest!.id > oldest!.id, 'ids sort with time');
      assert.deepEqual({ ...newest!, id: undefined }, { ...second, durationMs: 8, id: undefined });
      assert.equal(oldest!.tunnelId, undefined);
    });

    it('list is scoped to the account', async () => {
      const a = await newAccount();
      const b = await newAccount();
      await store().requests.insertBatch([record(a.id), record(b.id), record(b.id)]);
      assert.equal((await store().requests.list(a.id, { limit: 10 })).length, 1);
      assert.equal((await store().requests.list(b.id, { limit: 10 })).length, 2);
    });

    it('list filters by host (case-insensitive), tunnel, status, method and time range', async () => {
      const a = await newAccount();
      const host = `h-${unique()}.localhost`;
      await store().requests.insertBatch([
        record(a.id, { host, timestamp: T0 + 10, method: 'POST', status: 201, tunnelId: 'tun_one' }),
        record(a.id, { host, timestamp: T0 + 20, status: 404, tunnelId: 'tun_one' }),
        record(a.id, { timestamp: T0 + 30, tunnelId: 'tun_two' }),
      ]);
      const paths = async (q: Parameters<Store['requests']['list']>[1]) =>
        (await store().requests.list(a.id, q)).map((r) => r.timestamp - T0);
      assert.deepEqual(await paths({ limit: 10, host: host.toUpperCase() }), [20, 10]);
      assert.deepEqual(await paths({ limit: 10, tunnelId: 'tun_two' }), [30]);
      assert.deepEqual(await paths({ limit: 10, status: 404 }), [20]);
      assert.deepEqual(await paths({ limit: 10, statusClass: 4 }), [20]);
      assert.deepEqual(await paths({ limit: 10, statusClass: 2 }), [30, 10]);
      assert.deepEqual(await paths({ limit: 10, statusClass: 5 }), []);
      assert.deepEqual(await paths({ limit: 10, statusClass: 2, host }), [10]);
      assert.deepEqual(await paths({ limit: 10, method: 'post' }), [10]);
      assert.deepEqual(await paths({ limit: 10, since: T0 + 20 }), [30, 20]);
      assert.deepEqual(await paths({ limit: 10, until: T0 + 20 }), [10]);
      assert.deepEqual(await paths({ limit: 2 }), [30, 20]);
    });

    it('paging with the before cursor visits every record once, ties on timestamp included', async () => {
      const a = await newAccount();
      const stamps = [5, 5, 5, 4, 3, 3, 1];
      await store().requests.insertBatch(stamps.map((s, i) => record(a.id, { timestamp: T0 + s, path: `/${i}` })));
      const all = await store().requests.list(a.id, { limit: 100 });
      const seen: string[] = [];
      let before: { timestamp: number; id: string } | undefined;
      for (;;) {
        const page = await store().requests.list(a.id, { limit: 2, before });
        if (page.length === 0) break;
        seen.push(...page.map((r) => r.id));
        const last = page[page.length - 1]!;
        before = { timestamp: last.timestamp, id: last.id };
      }
      assert.deepEqual(
        seen,
        all.map((r) => r.id),
      );
      assert.equal(new Set(seen).size, stamps.length);
    });

    it('insertBatch names the ids its records are stored under, as list returns them', async () => {
      const a = await newAccount();
      const b = await newAccount();
      const batch = [
        record(a.id, { timestamp: T0 + 1.6, path: '/a' }),
        record(b.id, { path: '/b' }),
        record(a.id, { timestamp: T0 + 1, path: '/c' }),
      ];
      const ids = await store().requests.insertBatch(batch);
      const listed = [...(await store().requests.list(a.id, { limit: 10 })), ...(await store().requests.list(b.id, { limit: 10 }))];
      const idOfPath = new Map(listed.map((r) => [r.path, r.id]));
      assert.deepEqual(
        batch.map((_, i) => ids.idAt(i)),
        ['/a', '/b', '/c'].map((path) => idOfPath.get(path)),
      );
    });

    it('list returns one record beyond the largest page, so a full page can tell that more exist', async () => {
      const a = await newAccount();
      await store().requests.insertBatch(Array.from({ length: MAX_REQUEST_LIST + 5 }, (_, i) => record(a.id, { timestamp: T0 + i })));
      assert.equal((await store().requests.list(a.id, { limit: MAX_REQUEST_PAGE + 1 })).length, MAX_REQUEST_PAGE + 1);
      assert.equal((await store().requests.list(a.id, { limit: 1_000_000 })).length, MAX_REQUEST_LIST);
    });

    it('insertBatch is one transaction: a bad record leaves none of the batch behind', async () => {
      const a = await newAccount();
      const bad = { ...record(a.id), method: null } as unknown as NewRequestRecord;
      await assert.rejects(store().requests.insertBatch([record(a.id), record(a.id), bad]));
      assert.deepEqual(await store().requests.list(a.id, { limit: 10 }), []);
    });

    it('insertBatch takes batches larger than one statement', async () => {
      const a = await newAccount();
      await store().requests.insertBatch(Array.from({ length: 450 }, (_, i) => record(a.id, { timestamp: T0 + i })));
      const page = await store().requests.list(a.id, { limit: 1000 });
      assert.equal(page.length, 450);
    });

    it('prune deletes records older than the cutoff, on every account', async () => {
      const a = await newAccount();
      const b = await newAccount();
      // Timestamps far below every other test's, so the cutoff touches only these.
      await store().requests.insertBatch([
        record(a.id, { timestamp: 1000 }),
        record(a.id, { timestamp: 3000 }),
        record(b.id, { timestamp: 2000 }),
        record(b.id, { timestamp: 4000 }),
      ]);
      const deleted = await store().requests.prune({ olderThanMs: 3000, maxPerAccount: 1_000_000 });
      assert.equal(deleted, 2);
      assert.deepEqual(
        (await store().requests.list(a.id, { limit: 10 })).map((r) => r.timestamp),
        [3000],
      );
      assert.deepEqual(
        (await store().requests.list(b.id, { limit: 10 })).map((r) => r.timestamp),
        [4000],
      );
    });

    it('prune deletes more rows than one chunk, and keeps the newest', async () => {
      const a = await newAccount();
      const total = PRUNE_CHUNK_ROWS * 2 + 37;
      await store().requests.insertBatch(Array.from({ length: total }, (_, i) => record(a.id, { timestamp: T0 + i })));
      const deleted = await store().requests.prune({ olderThanMs: 0, maxPerAccount: 10 });
      assert.ok(deleted >= total - 10, `deleted ${deleted} of ${total}`);
      const kept = await store().requests.list(a.id, { limit: 100 });
      assert.deepEqual(
        kept.map((r) => r.timestamp),
        Array.from({ length: 10 }, (_, i) => T0 + total - 1 - i),
      );
    });

    it('prune keeps only the newest maxPerAccount records of each account', async () => {
      const a = await newAccount();
      const b = await newAccount();
      await store().requests.insertBatch([
        ...[1, 2, 3, 3, 4, 5].map((s) => record(a.id, { timestamp: T0 + s })),
        ...[1, 2].map((s) => record(b.id, { timestamp: T0 + s })),
      ]);
      const before = await store().requests.list(a.id, { limit: 10 });
      const deleted = await store().requests.prune({ olderThanMs: 0, maxPerAccount: 3 });
      assert.ok(deleted >= 3);
      assert.deepEqual(
        (await store().requests.list(a.id, { limit: 10 })).map((r) => r.id),
        before.slice(0, 3).map((r) => r.id),
      );
      assert.equal((await store().requests.list(b.id, { limit: 10 })).length, 2);
    });
  });
}
