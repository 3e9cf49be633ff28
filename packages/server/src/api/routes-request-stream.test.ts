import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NewRequestRecord, Store } from '../store/index.js';
import { SseClient, type SseEvent } from '@svcrouter/testkit/sse-client';
import { RequestPage } from './schemas.js';
import { startApiFixture, type ApiFixture } from './test-support.js';

const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

function record(accountId: string, i: number, over: Partial<NewRequestRecord> = {}): NewRequestRecord {
  return {
    accountId,
    tunnelId: 'tun_live',
    timestamp: T0 + i,
    method: i % 2 === 0 ? 'GET' : 'POST',
    path: `/live/${i}`,
    status: i % 3 === 0 ? 404 : 200,
    durationMs: 4.4,
    bytes: 10 + i,
    ip: '203.0.113.7',
    userAgent: 'stream-test',
    proto: 'HTTP/1.1',
    host: 'live.localhost',
    ...over,
  };
}

const requestIds = (events: SseEvent[]): string[] => events.filter((e) => e.event === 'request').map((e) => e.id!);

describe('GET /v1/requests/stream', () => {
  let api: ApiFixture;
  /** Reads of the store wait for this while set (to hold a stream at the seam of `since`). */
  let gate: Promise<void> | undefined;
  const open: SseClient[] = [];
  before(async () => {
    api = await startApiFixture({
      requestStream: { keepAliveMs: 50, maxQueued: 20, coalesceMs: 0 },
      routeStore: (store): Store => ({
        ...store,
        requests: { ...store.requests, list: async (...args) => (await gate, store.requests.list(...args)) },
      }),
    });
  });
  after(async () => {
    for (const client of open) client.close();
    await api.close();
  });

  async function stream(query = '', token: string | null = api.a.token): Promise<SseClient> {
    const client = await SseClient.open(`${api.url}/v1/requests/stream${query}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    open.push(client);
    return client;
  }

  /** Stores a batch and publishes it, as the inspector does. */
  async function store(records: NewRequestRecord[]): Promise<void> {
    api.liveRequests.publish(records, await api.store.requests.insertBatch(records));
  }

  it('answers 401 without a token and 400 naming a bad filter', async () => {
    const anonymous = await stream('', null);
    assert.equal(anonymous.status, 401);
    for (const [query, field] of [
      ['?status=6xx', 'status'],
      ['?since=yesterday', 'since'],
      ['?limit=5', 'limit'],
    ] as const) {
      const res = await api.call('GET', `/v1/requests/stream${query}`);
      assert.equal(res.status, 400, query);
      assert.match((res.body as { message: string }).message, new RegExp(`"${field}"`));
    }
  });

  it('sends each stored record of the account once, exactly as GET /v1/requests lists it', async () => {
    const client = await stream();
    assert.equal(client.status, 200);
    assert.match(String(client.headers['content-type']), /^text\/event-stream/);
    const mine = Array.from({ length: 6 }, (_, i) => record(api.a.account.id, 1000 + i, { path: `/mine/${i}` }));
    await store([...mine.slice(0, 3), record(api.b.account.id, 1, { path: '/b-secret' }), ...mine.slice(3)]);
    await client.until((events) => requestIds(events).length >= 6, 'six records');
    const listed = RequestPage.parse((await api.call('GET', '/v1/requests?limit=6')).body).requests.reverse();
    const received = client.named();
    assert.deepEqual(
      received.map((e) => JSON.parse(e.data!)),
      listed.sort((x, y) => (x.path < y.path ? -1 : 1)),
    );
    assert.deepEqual(
      received.map((e) => e.id),
      received.map((e) => (JSON.parse(e.data!) as { id: string }).id),
    );
    assert.ok(!client.text.includes('/b-secret'));
  });

  it('applies host, tunnel, status (exact and class) and method', async () => {
    const cases: Array<[string, (r: NewRequestRecord) => boolean]> = [
      ['?host=OTHER.localhost', (r) => r.host === 'other.localhost'],
      ['?tunnel=tun_other', (r) => r.tunnelId === 'tun_other'],
      ['?status=404', (r) => r.status === 404],
      ['?status=2xx', (r) => r.status >= 200 && r.status < 300],
      ['?method=post', (r) => r.method === 'POST'],
    ];
    const clients = await Promise.all(cases.map(([query]) => stream(query)));
    const batch = Array.from({ length: 12 }, (_, i) =>
      record(api.a.account.id, 2000 + i, {
        host: i % 4 === 0 ? 'other.localhost' : 'live.localhost',
        tunnelId: i % 5 === 0 ? 'tun_other' : 'tun_live',
      }),
    );
    // A last record every stream takes, so each knows when the batch is over.
    const last = record(api.a.account.id, 2100, { host: 'other.localhost', tunnelId: 'tun_other', status: 204, method: 'POST' });
    await store([...batch, last]);
    for (const [index, [query, keep]] of cases.entries()) {
      const client = clients[index]!;
      const expected = [...batch.filter(keep), last].map((r) => r.path);
      if (!keep(last)) expected.pop();
      await client.until((events) => requestIds(events).length >= expected.length, query);
      assert.deepEqual(
        client.named().map((e) => (JSON.parse(e.data!) as { path: string }).path),
        expected,
        query,
      );
    }
  });

  it('with since, sends stored records oldest first, then live ones, none twice across the seam', async () => {
    const since = T0 + 3000;
    await store([
      record(api.a.account.id, 2990, { path: '/too-old' }),
      ...Array.from({ length: 3 }, (_, i) => record(api.a.account.id, 3000 + i, { path: `/stored/${i}` })),
    ]);
    let openGate!: () => void;
    gate = new Promise((resolve) => (openGate = resolve));
    const client = await stream(`?since=${new Date(since).toISOString()}`);
    // Stored and published while the stream waits for the store: it holds them live and will list them too.
    await store([record(api.a.account.id, 3010, { path: '/seam' })]);
    openGate();
    gate = undefined;
    await client.until((events) => requestIds(events).length >= 4, 'stored records and the seam');
    await store([record(api.a.account.id, 3020, { path: '/live' })]);
    await client.until((events) => requestIds(events).length >= 5, 'the live record');
    const paths = client.named().map((e) => (JSON.parse(e.data!) as { path: string }).path);
    assert.deepEqual(paths, ['/stored/0', '/stored/1', '/stored/2', '/seam', '/live']);
  });

  it('sends a keep-alive comment while idle', async () => {
    const client = await stream('?host=idle.localhost');
    await client.until((events) => events.some((e) => e.comment === 'keep-alive'), 'a keep-alive');
  });

  it('a slow subscriber drops records and is told how many; another gets every record', async () => {
    const slow = await stream('?host=flood.localhost');
    const fast = await stream('?host=flood.localhost');
    await slow.until((events) => events.length >= 1, 'the stream to open');
    slow.pause();
    const total = 20_000;
    // Client and server share this process's event loop here, so the fast stream is kept fast
    // by publishing no more than its queue holds before it has read them.
    const step = 10;
    for (let i = 0; i < total; i += step) {
      const batch = Array.from({ length: step }, (_, k) =>
        record(api.a.account.id, 5000 + i + k, { host: 'flood.localhost', path: `/flood/${i + k}/${'x'.repeat(200)}` }),
      );
      api.liveRequests.publish(batch, { idAt: (k) => `req_flood_${i + k}` });
      await fast.until(() => fast.count() >= i + step, 'the fast stream to keep up');
    }
    slow.resume();
    await slow.until((events) => events.some((e) => e.event === 'dropped'), 'a dropped event');
    const dropped = slow.named('dropped').map((e) => JSON.parse(e.data!) as { dropped: number; message: string });
    const sum = dropped.reduce((n, d) => n + d.dropped, 0);
    assert.ok(sum > 0);
    assert.match(dropped[0]!.message, /read too slowly/);
    await slow.until(() => slow.count() + sum >= total, 'the rest');
    assert.equal(requestIds(slow.events).length + sum, total, 'every record was sent or counted as dropped');
    assert.equal(new Set(requestIds(fast.events)).size, total);
  });

  it('unsubscribes when the client goes away', async () => {
    const before = api.liveRequests.subscriberCount;
    const client = await stream();
    await client.until((events) => events.length >= 1, 'the stream to open');
    assert.equal(api.liveRequests.subscriberCount, before + 1);
    client.close();
    // The server learns of the close from its socket; wait for that, not for a time.
    while (api.liveRequests.subscriberCount !== before) await new Promise((resolve) => setImmediate(resolve));
  });
});
