import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SseClient } from '@svcrouter/testkit/sse-client';
import { startAgent, startOrigin, startServer, visit, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { apiClient, eventually, openApi, type Captured, type Page } from './harness/api-helpers.js';

// GET /v1/requests/stream against a real server, agents and origin: live records with the
// fields of GET /v1/requests, every filter, since=, a slow subscriber, a subscriber that
// leaves, HTTP/2, and no token.

const data = (client: SseClient): Captured[] => client.named().map((e) => JSON.parse(e.data!) as Captured);

describe('GET /v1/requests/stream', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let one: TestAgent;
  let two: TestAgent;
  let api: ReturnType<typeof apiClient>;
  let token: string;
  const open: SseClient[] = [];

  before(async () => {
    server = await startServer();
    token = server.token!;
    origin = await startOrigin();
    one = await startAgent(server, { token, target: origin.port });
    two = await startAgent(server, { token, target: origin.port });
    api = apiClient(server, await openApi(server));
  });
  after(async () => {
    for (const client of open) client.close();
    await one?.close();
    await two?.close();
    await origin?.close();
    await server?.close();
  });

  async function stream(query = '', options: { token?: string | null; http2?: boolean } = {}): Promise<SseClient> {
    const auth: Record<string, string> = options.token === null ? {} : { authorization: `Bearer ${options.token ?? token}` };
    const base = options.http2 ? `https://localhost:${server.httpsPort}` : server.url;
    const client = await SseClient.open(`${base}/v1/requests/stream${query}`, { headers: auth, http2: options.http2, ca: server.caPem });
    open.push(client);
    // The first bytes (a comment) arrive once the server has subscribed the stream.
    if (client.status === 200) await client.until((events) => events.length >= 1, 'the stream to open');
    return client;
  }

  async function listed(query: string): Promise<Captured[]> {
    return ((await api('GET', `/v1/requests?limit=1000&${query}`, { token })).body as Page).requests;
  }

  it('refuses a caller without a token', async () => {
    const anonymous = await stream('', { token: null });
    assert.equal(anonymous.status, 401);
    await anonymous.whenEnded();
    assert.deepEqual(JSON.parse(anonymous.text), { error: 'unauthorized' });
  });

  it('sends live records with exactly the fields GET /v1/requests lists, over HTTP/1.1 and HTTP/2', async () => {
    const h1 = await stream(`?host=${one.hostname}`);
    const h2 = await stream(`?host=${one.hostname}`, { http2: true });
    assert.match(String(h1.headers['content-type']), /^text\/event-stream/);
    const answer = await visit(server, one.hostname, '/status/418', { headers: { 'user-agent': 'stream-e2e/exact' } });
    assert.equal(answer.status, 418);
    await h1.until(() => h1.count() >= 1, 'the record on HTTP/1.1');
    await h2.until(() => h2.count() >= 1, 'the record on HTTP/2');
    const [event] = h1.named();
    const [record] = data(h1);
    assert.equal(event!.id, record!.id);
    const tunnels = (await api('GET', '/v1/tunnels', { token })).body as { tunnels: Array<{ id: string; host: string }> };
    assert.equal(record!.tunnelId, tunnels.tunnels.find((t) => t.host === one.hostname)!.id);
    assert.equal(record!.userAgent, 'stream-e2e/exact');
    assert.equal(record!.status, 418);
    const stored = (await listed(`host=${one.hostname}`)).find((r) => r.id === record!.id);
    assert.deepEqual(record, stored, 'the same record as the list shows, id and owner included');
    assert.deepEqual(data(h2), [record]);
  });

  it('applies host, tunnel, status (exact and class) and method', async () => {
    const tunnels = (await api('GET', '/v1/tunnels', { token })).body as { tunnels: Array<{ id: string; host: string }> };
    const tunnelTwo = tunnels.tunnels.find((t) => t.host === two.hostname)!.id;
    const cases: Array<[string, (r: Captured) => boolean]> = [
      [`host=${two.hostname.toUpperCase()}`, (r) => r.host === two.hostname],
      [`tunnel=${tunnelTwo}`, (r) => r.tunnelId === tunnelTwo],
      ['status=404', (r) => r.status === 404],
      ['status=2xx', (r) => r.status >= 200 && r.status < 300],
      ['method=POST', (r) => r.method === 'POST'],
      [
        `host=${one.hostname}&status=4xx&method=get`,
        (r) => r.host === one.hostname && r.status >= 400 && r.status < 500 && r.method === 'GET',
      ],
    ];
    const everything = await stream('?status=1xx&method=PATCH');
    const all = await stream();
    const filtered = await Promise.all(cases.map(([query]) => stream(`?${query}`)));
    const visits = [
      [one, '/status/200', 'GET'],
      [one, '/status/404', 'GET'],
      [one, '/echo', 'POST'],
      [one, '/status/503', 'GET'],
      [two, '/status/201', 'GET'],
      [two, '/status/404', 'GET'],
      [two, '/echo', 'POST'],
      [two, '/status/418', 'GET'],
    ] as const;
    for (const [agent, path, method] of visits)
      await visit(server, agent.hostname, path, { method, body: method === 'POST' ? 'x' : undefined });
    await all.until(() => all.count() >= visits.length, 'every record on the unfiltered stream');
    const received = data(all);
    assert.equal(received.length, visits.length);
    for (const [index, [query, keep]] of cases.entries()) {
      const client = filtered[index]!;
      const expected = received.filter(keep).map((r) => r.id);
      assert.ok(expected.length > 0 && expected.length < received.length, `${query} selects some`);
      await client.until(() => client.count() >= expected.length, query);
      assert.deepEqual(
        data(client).map((r) => r.id),
        expected,
        query,
      );
    }
    assert.equal(everything.count(), 0, 'a filter nothing matches sends nothing');
  });

  it('with since, sends the stored records oldest first, then live ones, each once', async () => {
    const since = new Date().toISOString();
    for (let i = 0; i < 5; i++) await visit(server, two.hostname, `/status/200?stored=${i}`);
    await eventually(
      () => listed(`since=${since}&host=${two.hostname}`),
      (r) => r.length >= 5,
      'stored records',
    );
    const client = await stream(`?host=${two.hostname}&since=${since}`);
    for (let i = 0; i < 5; i++) await visit(server, two.hostname, `/status/200?live=${i}`);
    await client.until(() => client.count() >= 10, 'stored and live records');
    const paths = data(client).map((r) => r.path);
    assert.deepEqual(
      paths,
      [0, 1, 2, 3, 4].map((i) => `/status/200?stored=${i}`).concat([0, 1, 2, 3, 4].map((i) => `/status/200?live=${i}`)),
    );
    const ids = data(client).map((r) => r.id);
    assert.deepEqual(ids, (await listed(`since=${since}&host=${two.hostname}`)).map((r) => r.id).reverse());
  });

  it('a slow subscriber is told what it dropped; proxying and another subscriber are unaffected', async () => {
    const total = 3000;
    // Long paths make long events, so the slow stream's socket buffers fill with few requests.
    const pad = 'p'.repeat(6000);
    const slow = await stream(`?host=${one.hostname}&method=PUT`);
    const fast = await stream(`?host=${one.hostname}&method=PUT`);
    slow.pause();
    const statuses: number[] = [];
    const workers = Array.from({ length: 16 }, async (_, w) => {
      for (let i = w; i < total; i += 16)
        statuses.push((await visit(server, one.hostname, `/status/200?n=${i}&pad=${pad}`, { method: 'PUT' })).status);
    });
    await Promise.all(workers);
    assert.equal(statuses.length, total);
    assert.ok(
      statuses.every((s) => s === 200),
      'every request went through',
    );
    await fast.until(() => fast.count() >= total, 'every record on the fast stream');
    assert.equal(new Set(data(fast).map((r) => r.id)).size, total);
    slow.resume();
    await slow.until(() => slow.count('dropped') >= 1, 'a dropped event');
    const dropped = slow.named('dropped').map((e) => JSON.parse(e.data!) as { dropped: number; message: string });
    const sum = dropped.reduce((n, d) => n + d.dropped, 0);
    assert.ok(sum > 0);
    assert.match(dropped[0]!.message, /read too slowly/);
    await slow.until(() => slow.count() + sum >= total, 'the records it kept');
    assert.equal(slow.count() + sum, total, 'every record was sent or counted');
  });

  it('GET /v1/requests?limit=1000 pages through the thousands of records the slow-subscriber test made', async () => {
    const all = (await api('GET', '/v1/requests?limit=1', { token })).body as Page;
    assert.ok(all.nextCursor);
    const ids = new Set<string>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Page = (await api('GET', `/v1/requests?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { token })).body as Page;
      for (const r of page.requests) ids.add(r.id);
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null && pages < 10);
    assert.ok(ids.size > 3000, `${ids.size} records`);
    assert.equal(pages, Math.ceil(ids.size / 1000));
  });

  it('forgets a subscriber that disconnects', async () => {
    const subscribers = async (): Promise<number> => {
      const metrics = await api('GET', '/metrics', 'none');
      return Number(/^svc_inspector_stream_subscribers (\d+)$/m.exec(metrics.text)![1]);
    };
    const before = await subscribers();
    const client = await stream();
    assert.equal(await subscribers(), before + 1);
    client.close();
    await eventually(subscribers, (n) => n === before, 'the stream unsubscribed');
  });

  // Last: it stops the server.
  it('ends open streams when the server stops, on HTTP/1.1 and HTTP/2, and the server exits cleanly', async () => {
    const h1 = await stream();
    const h2 = await stream('', { http2: true });
    const stopping = server.proc.kill('SIGTERM');
    await h1.whenEnded();
    await h2.whenEnded();
    assert.deepEqual(await stopping, { code: 0, signal: null });
  });
});
