import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Account, TunnelList } from './schemas.js';
import { startApiFixture, type ApiFixture } from './test-support.js';

describe('account and tunnel routes', () => {
  let api: ApiFixture;
  before(async () => {
    api = await startApiFixture();
  });
  after(() => api.close());

  const bind = (accountId: string, hostname: string) =>
    api.store.tunnels.upsertOnline({
      accountId,
      hostname,
      pinned: true,
      localAddr: 'localhost:3000',
      agentVersion: '0.1.0',
      agentIp: '127.0.0.1',
      nodeId: 'n1',
    });

  it('GET /v1/me answers exactly id, email, name and plan', async () => {
    const res = await api.call('GET', '/v1/me');
    assert.equal(res.status, 200);
    assert.deepEqual(Account.parse(res.body), { id: api.a.account.id, email: api.a.account.email, name: 'Ann', plan: 'free' });
  });

  it('GET /v1/tunnels lists the tunnel fields, with the status from the live table', async () => {
    const online = await bind(api.a.account.id, 'live-a.localhost');
    const stale = await bind(api.a.account.id, 'stale-a.localhost');
    api.live.set(online.id, api.a.account.id);
    const { tunnels } = TunnelList.parse((await api.call('GET', '/v1/tunnels')).body);
    const byId = new Map(tunnels.map((t) => [t.id, t]));
    assert.equal(byId.get(online.id)?.status, 'online');
    assert.equal(byId.get(stale.id)?.status, 'offline');
    assert.equal(byId.get(online.id)?.url, 'https://live-a.localhost:8443');
    assert.equal(byId.get(online.id)?.host, 'live-a.localhost');
    assert.equal(byId.get(online.id)?.agentIp, '127.0.0.1');
    assert.equal(byId.get(online.id)?.agentVersion, '0.1.0');
  });

  it('DELETE /v1/tunnels/:id releases the tunnel and answers 204', async () => {
    const tunnel = await bind(api.a.account.id, 'gone-a.localhost');
    const res = await api.call('DELETE', `/v1/tunnels/${tunnel.id}`);
    assert.equal(res.status, 204);
    assert.deepEqual(api.released.at(-1), tunnel.id);
    assert.equal(await api.store.tunnels.byId(api.a.account.id, tunnel.id), undefined);
  });

  it("DELETE /v1/tunnels/:id of another account's tunnel is a 404 that echoes nothing and changes nothing", async () => {
    const tunnel = await bind(api.b.account.id, 'mine-b.localhost');
    const res = await api.call('DELETE', `/v1/tunnels/${tunnel.id}`);
    assert.equal(res.status, 404);
    assert.equal((res.body as { error: string }).error, 'not_found');
    assert.ok(!res.text.includes(tunnel.id) && !res.text.includes('mine-b'));
    assert.ok(await api.store.tunnels.byId(api.b.account.id, tunnel.id));
  });

  it('GET /v1/tunnels never lists another account', async () => {
    const res = await api.call('GET', '/v1/tunnels', { token: api.b.token });
    assert.ok(!res.text.includes('-a.localhost'));
  });
});
