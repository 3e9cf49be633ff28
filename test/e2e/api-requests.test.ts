import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startAgent, startOrigin, startServer, visit, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { apiClient, eventually, openApi, type Captured, type Page } from './harness/api-helpers.js';

// GET /v1/requests over real traffic: two tunnels, more records than one page, every filter,
// cursor paging without duplicates or gaps.

const FIRST = 30;
const SECOND = 25;
const TOTAL = FIRST + SECOND + 1;

describe('REST API: captured requests', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let one: TestAgent;
  let two: TestAgent;
  let api: ReturnType<typeof apiClient>;
  let token: string;
  let all: Captured[];
  let startedAt: string;

  before(async () => {
    server = await startServer();
    token = server.token!;
    origin = await startOrigin();
    one = await startAgent(server, { token, target: origin.port });
    two = await startAgent(server, { token, target: origin.port });
    api = apiClient(server, await openApi(server));
    startedAt = new Date().toISOString();
    for (let i = 0; i < FIRST; i++) {
      if (i % 3 === 0) await visit(server, one.hostname, '/echo', { method: 'POST', body: 'x' });
      else await visit(server, one.hostname, i % 3 === 1 ? '/status/200' : '/status/404');
    }
    for (let i = 0; i < SECOND; i++) await visit(server, two.hostname, '/status/201', { headers: { 'user-agent': 'api-e2e/1' } });
    await visit(server, two.hostname, '/status/418', { headers: { 'user-agent': 'api-e2e/exact' } });
    // Inspector records are written in batches: the one place a bounded re-read is needed.
    const full = await eventually(
      () => api('GET', '/v1/requests?limit=1000', { token }),
      (r) => (r.body as Page).requests.length >= TOTAL,
      'all requests captured',
    );
    all = (full.body as Page).requests;
  });
  after(async () => {
    await one?.close();
    await two?.close();
    await origin?.close();
    await server?.close();
  });

  it('records each request with exactly the documented fields', async () => {
    const tunnels = (await api('GET', '/v1/tunnels', { token })).body as { tunnels: Array<{ id: string; host: string }> };
    const record = all.find((r) => r.userAgent === 'api-e2e/exact')!;
    assert.deepEqual(Object.keys(record).sort(), [
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
    ]);
    // A tunnel without routes names no target.
    assert.equal(record.target, null);
    assert.equal(record.method, 'GET');
    assert.equal(record.path, '/status/418');
    assert.equal(record.status, 418);
    assert.equal(record.bytes, 'status 418'.length);
    assert.ok(Number.isInteger(record.durationMs) && record.durationMs >= 0);
    assert.equal(record.ip, '127.0.0.1');
    assert.equal(record.proto, 'HTTP/1.1');
    assert.equal(record.host, two.hostname);
    assert.equal(record.tunnelId, tunnels.tunnels.find((t) => t.host === two.hostname)!.id);
    assert.ok(record.timestamp >= startedAt.slice(0, 19) && !Number.isNaN(Date.parse(record.timestamp)));
  });

  it('lists newest first and defaults to a page of 50', async () => {
    assert.equal(all.length, TOTAL);
    for (let i = 1; i < all.length; i++) assert.ok(all[i - 1]!.timestamp >= all[i]!.timestamp);
    assert.equal(all[0]!.userAgent, 'api-e2e/exact');
    const page = (await api('GET', '/v1/requests', { token })).body as Page;
    assert.equal(page.requests.length, 50);
    assert.deepEqual(
      page.requests.map((r) => r.id),
      all.slice(0, 50).map((r) => r.id),
    );
    assert.equal(typeof page.nextCursor, 'string');
  });

  it('pages with limit and cursor through every record exactly once, in order', async () => {
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 20; pages++) {
      const query: string = cursor ? `?limit=7&cursor=${encodeURIComponent(cursor)}` : '?limit=7';
      const page = (await api('GET', `/v1/requests${query}`, { token })).body as Page;
      assert.ok(page.requests.length <= 7);
      ids.push(...page.requests.map((r) => r.id));
      cursor = page.nextCursor;
      if (cursor === null) break;
    }
    assert.equal(cursor, null);
    assert.equal(new Set(ids).size, ids.length, 'no duplicates');
    assert.deepEqual(
      ids,
      all.map((r) => r.id),
      'no gaps, same order',
    );
  });

  it('filters by host, tunnel, status, method, since and until', async () => {
    const tunnelOne = all.find((r) => r.host === one.hostname)!.tunnelId!;
    const middle = all[Math.floor(all.length / 2)]!.timestamp;
    const cases: Array<[string, (r: Captured) => boolean]> = [
      [`host=${two.hostname.toUpperCase()}`, (r) => r.host === two.hostname],
      [`tunnel=${tunnelOne}`, (r) => r.tunnelId === tunnelOne],
      ['status=404', (r) => r.status === 404],
      ['status=4xx', (r) => r.status >= 400 && r.status < 500],
      ['method=post', (r) => r.method === 'POST'],
      [`since=${middle}`, (r) => r.timestamp >= middle],
      [`until=${middle}`, (r) => r.timestamp < middle],
      [`host=${one.hostname}&status=200&method=GET`, (r) => r.host === one.hostname && r.status === 200 && r.method === 'GET'],
    ];
    for (const [query, keep] of cases) {
      const page = (await api('GET', `/v1/requests?limit=1000&${query}`, { token })).body as Page;
      const expected = all.filter(keep).map((r) => r.id);
      assert.ok(expected.length > 0 && expected.length < all.length, `${query} selects some`);
      assert.deepEqual(
        page.requests.map((r) => r.id),
        expected,
        query,
      );
    }
  });

  it('pages a filtered list with the cursor too', async () => {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=4&host=${two.hostname}${cursor ? `&cursor=${cursor}` : ''}`;
      const page = (await api('GET', `/v1/requests${query}`, { token })).body as Page;
      ids.push(...page.requests.map((r) => r.id));
      cursor = page.nextCursor;
    } while (cursor !== null && ids.length <= TOTAL);
    assert.deepEqual(
      ids,
      all.filter((r) => r.host === two.hostname).map((r) => r.id),
    );
  });

  for (const [query, field] of [
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=abc', 'limit'],
    ['cursor=%25%25not-base64', 'cursor'],
    [`cursor=${Buffer.from('{"timestamp":"soon"}').toString('base64url')}`, 'cursor'],
    ['status=2x', 'status'],
    ['status=6xx', 'status'],
    ['since=2025-13-01T00:00:00Z', 'since'],
    ['until=tomorrow', 'until'],
    ['since=2025-02-01T00:00:00Z&until=2025-01-01T00:00:00Z', 'since'],
    ['tunnelId=tun_x', 'tunnelId'],
  ] as const) {
    it(`answers 400 naming ${field} for ?${query}`, async () => {
      const res = await api('GET', `/v1/requests?${query}`, { token });
      assert.equal(res.status, 400);
      assert.equal((res.body as { error: string }).error, 'invalid_request');
      assert.match((res.body as { message: string }).message, new RegExp(`"${field}"`));
    });
  }

  it('accepts limit 1 and 1000', async () => {
    assert.equal(((await api('GET', '/v1/requests?limit=1', { token })).body as Page).requests.length, 1);
    assert.equal(((await api('GET', '/v1/requests?limit=1000', { token })).body as Page).nextCursor, null);
  });
});
