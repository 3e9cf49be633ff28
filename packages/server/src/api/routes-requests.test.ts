import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NewRequestRecord } from '../store/index.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { RequestPage } from './schemas.js';
import { startApiFixture, type ApiFixture } from './test-support.js';

const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

function record(accountId: string, i: number, over: Partial<NewRequestRecord> = {}): NewRequestRecord {
  return {
    accountId,
    tunnelId: i % 2 === 0 ? 'tun_even' : 'tun_odd',
    // Pairs share a millisecond, so the id has to break ties without gaps or repeats.
    timestamp: T0 + Math.floor(i / 2) * 1000,
    method: i % 3 === 0 ? 'POST' : 'GET',
    path: `/item/${i}`,
    status: i % 5 === 0 ? 404 : 200,
    durationMs: 12.6,
    bytes: 100 + i,
    ip: '203.0.113.9',
    userAgent: 'test-agent',
    proto: 'HTTP/1.1',
    host: i % 4 === 0 ? 'four.localhost' : 'other.localhost',
    ...over,
  };
}

describe('GET /v1/requests', () => {
  let api: ApiFixture;
  const TOTAL = 23;
  before(async () => {
    api = await startApiFixture();
    await api.store.requests.insertBatch(Array.from({ length: TOTAL }, (_, i) => record(api.a.account.id, i)));
    await api.store.requests.insertBatch([record(api.b.account.id, 0, { path: '/b-secret', host: 'four.localhost' })]);
  });
  after(() => api.close());

  async function page(query: string, token = api.a.token) {
    const res = await api.call('GET', `/v1/requests${query}`, { token });
    assert.equal(res.status, 200, res.text);
    return RequestPage.parse(res.body);
  }

  it('pages newest first through every record exactly once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const result: Awaited<ReturnType<typeof page>> = await page(`?limit=5${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...result.requests.map((r) => r.path));
      cursor = result.nextCursor;
      pages++;
    } while (cursor !== null && pages < 10);
    assert.equal(pages, 5);
    assert.deepEqual(seen.sort(), Array.from({ length: TOTAL }, (_, i) => `/item/${i}`).sort());
  });

  it('returns the exact record fields with integer numbers and an ISO timestamp', async () => {
    const [first] = (await page('?limit=1')).requests;
    assert.deepEqual(
      Object.keys(first!).sort(),
      [
        'bytes',
        'durationMs',
        'host',
        'id',
        'ip',
        'method',
        'path',
        'proto',
        'status',
        'target',
        'timestamp',
        'tunnelId',
        'userAgent',
      ].sort(),
    );
    assert.equal(first!.durationMs, 13);
    assert.equal(first!.timestamp, new Date(T0 + 11_000).toISOString());
  });

  it('defaults to 50 and ends with nextCursor null', async () => {
    const result = await page('');
    assert.equal(result.requests.length, TOTAL);
    assert.equal(result.nextCursor, null);
  });

  it('filters by host, tunnel, status, method (any case), since and until', async () => {
    const all = (await page('?limit=1000')).requests;
    const check = async (query: string, keep: (r: (typeof all)[number]) => boolean) => {
      const got = (await page(query)).requests.map((r) => r.id);
      assert.deepEqual(
        got,
        all.filter(keep).map((r) => r.id),
        query,
      );
      assert.ok(got.length > 0 && got.length < all.length, `${query} should select some records`);
    };
    await check('?host=FOUR.localhost', (r) => r.host === 'four.localhost');
    await check('?tunnel=tun_odd', (r) => r.tunnelId === 'tun_odd');
    await check('?status=404', (r) => r.status === 404);
    await check('?status=4xx', (r) => r.status >= 400 && r.status <= 499);
    await check('?status=2XX', (r) => r.status >= 200 && r.status <= 299);
    await check('?method=post', (r) => r.method === 'POST');
    const since = new Date(T0 + 5000).toISOString();
    const until = new Date(T0 + 8000).toISOString();
    await check(`?since=${since}`, (r) => r.timestamp >= since);
    await check(`?until=${until}`, (r) => r.timestamp < until);
  });

  it("never returns another account's records", async () => {
    const result = await page('?limit=1000&host=four.localhost', api.b.token);
    assert.deepEqual(
      result.requests.map((r) => r.path),
      ['/b-secret'],
    );
    const mine = await page('?limit=1000');
    assert.ok(!mine.requests.some((r) => r.path === '/b-secret'));
  });

  for (const [query, field] of [
    ['?limit=0', 'limit'],
    ['?limit=1001', 'limit'],
    ['?limit=ten', 'limit'],
    ['?status=abc', 'status'],
    ['?status=6xx', 'status'],
    ['?status=4x', 'status'],
    ['?status=099', 'status'],
    ['?since=yesterday', 'since'],
    ['?since=2025-01-02T00:00:00Z&until=2025-01-01T00:00:00Z', 'since'],
    ['?cursor=not-a-cursor', 'cursor'],
    [`?cursor=${Buffer.from('{"timestamp":"x"}').toString('base64url')}`, 'cursor'],
  ] as const) {
    it(`answers 400 naming ${field} for ${query}`, async () => {
      const res = await api.call('GET', `/v1/requests${query}`);
      assert.equal(res.status, 400);
      assert.match((res.body as { message: string }).message, new RegExp(`"${field}"`));
    });
  }
});

describe('GET /v1/requests at the largest page', () => {
  let api: ApiFixture;
  const TOTAL = 2 * 1000 + 7;
  before(async () => {
    api = await startApiFixture();
    await api.store.requests.insertBatch(Array.from({ length: TOTAL }, (_, i) => record(api.a.account.id, i)));
  });
  after(() => api.close());

  for (const limit of [1000, 999]) {
    it(`pages through every record with limit=${limit}`, async () => {
      const seen = new Set<string>();
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res = await api.call('GET', `/v1/requests?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(res.status, 200, res.text);
        const result = RequestPage.parse(res.body);
        for (const r of result.requests) seen.add(r.id);
        cursor = result.nextCursor;
        pages++;
        if (seen.size < TOTAL) assert.notEqual(cursor, null, `page ${pages} ends with records left`);
      } while (cursor !== null && pages < 10);
      assert.equal(seen.size, TOTAL);
      assert.equal(pages, Math.ceil(TOTAL / limit));
    });
  }
});

describe('request cursors', () => {
  it('round-trip and reject anything else', () => {
    const cursor = { timestamp: 1_736_942_400_000, id: 'req_0194665d4c00abcdef0123456789' };
    assert.deepEqual(decodeCursor(encodeCursor(cursor)), cursor);
    assert.match(encodeCursor(cursor), /^[A-Za-z0-9_-]+$/);
    for (const bad of [
      '',
      '!!!',
      Buffer.from('[]').toString('base64url'),
      Buffer.from('{"timestamp":1,"id":"x","more":1}').toString('base64url'),
    ]) {
      assert.equal(decodeCursor(bad), undefined, bad);
    }
  });
});
