import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openStore, type RequestRecord } from '@svcrouter/server/store';
import { unusedPort } from './harness/lifecycle-support.js';
import { api, startAgent, startOrigin, startServer, tempDir, visit, type TestOrigin, type TestServer } from './harness/index.js';

// Which visitor requests the Traffic Inspector keeps, through a real server: proxied ones,
// 502s, 429 quota refusals and a pinned name's offline page are recorded for the owner;
// unknown hostnames are not. Records are read from the store after a graceful stop (which
// flushes the inspector), so nothing waits on the write loop's timing.

const QUOTA = 64 * 1024;

describe('Traffic Inspector capture', () => {
  let data: { dir: string; remove(): Promise<void> };
  let server: TestServer;
  let origin: TestOrigin;

  before(async () => {
    data = await tempDir('svc-inspector-');
    // A tiny free quota for the 429 case; the other account is pro.
    server = await startServer({ dataDir: data.dir, env: { SVC_PLANS: JSON.stringify({ free: { bandwidthBytes: QUOTA } }) } });
    origin = await startOrigin();
  });
  after(async () => {
    await origin?.close();
    await server?.close({ keepData: true });
    await data?.remove();
  });

  it('records proxied requests, 502s, 429s and offline pinned names for the owner; not unknown hosts', async () => {
    const proToken = await server.createAccount('pro@example.com', 'pro');
    const freeToken = await server.createAccount('free@example.com', 'free');
    const idOf = async (token: string) => ((await api(server, 'GET', '/v1/me', { token })).body as { id: string }).id;
    const [pro, free] = [await idOf(proToken), await idOf(freeToken)];

    const live = await startAgent(server, { token: proToken, target: origin.port, subdomain: 'inspected' });
    const ok = await visit(server, live.hostname, '/status/201?x=1', {
      method: 'POST',
      body: 'abc',
      headers: { 'user-agent': 'inspector-e2e' },
    });
    assert.equal(ok.status, 201);
    const broken = await startAgent(server, { token: proToken, target: await unusedPort() });
    assert.equal((await visit(server, broken.hostname, '/down')).status, 502);
    await live.close();
    assert.equal((await visit(server, live.hostname, '/gone')).status, 404);
    assert.equal((await visit(server, 'nobody-owns-this.localhost', '/')).status, 404);

    // Exactly the quota: the download completes, and the quota is then consumed.
    const metered = await startAgent(server, { token: freeToken, target: origin.port });
    assert.equal((await visit(server, metered.hostname, `/bytes?n=${QUOTA}`)).status, 200);
    const refused = await visit(server, metered.hostname, '/after');
    assert.equal(refused.status, 429);

    await broken.close();
    await metered.close();
    await server.close({ keepData: true });
    const store = await openStore({ dataDir: data.dir });
    let proRecords: RequestRecord[];
    let freeRecords: RequestRecord[];
    try {
      proRecords = await store.requests.list(pro, { limit: 100 });
      freeRecords = await store.requests.list(free, { limit: 100 });
    } finally {
      await store.close();
    }
    const byPath = new Map(proRecords.map((r) => [r.path, r]));
    assert.deepEqual([...byPath.keys()].sort(), ['/down', '/gone', '/status/201?x=1']);

    const created = byPath.get('/status/201?x=1')!;
    assert.equal(created.method, 'POST');
    assert.equal(created.status, 201);
    assert.equal(created.host, live.hostname);
    assert.equal(created.bytes, Buffer.byteLength('status 201'));
    assert.equal(created.userAgent, 'inspector-e2e');
    assert.equal(created.proto, 'HTTP/1.1');
    assert.equal(created.ip, '127.0.0.1');
    assert.ok(created.tunnelId?.startsWith('tun_'));
    assert.equal(byPath.get('/down')?.status, 502);
    const gone = byPath.get('/gone')!;
    assert.equal(gone.status, 404, 'the offline page, recorded for the pinned name');
    assert.equal(gone.tunnelId, created.tunnelId);

    assert.deepEqual(
      freeRecords.map((r) => [r.path, r.status]),
      [
        ['/after', 429],
        [`/bytes?n=${QUOTA}`, 200],
      ],
    );
  });
});
