import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_PLANS } from '../config.js';
import { Usage, UsageHistory } from './schemas.js';
import { startApiFixture, type ApiFixture } from './test-support.js';

describe('usage routes', () => {
  let api: ApiFixture;
  before(async () => {
    api = await startApiFixture();
    const day = (d: string, bytes: number) => ({
      accountId: api.a.account.id,
      month: d.slice(0, 7),
      day: d,
      bytes,
      requests: 2,
      peakTunnels: 1,
    });
    await api.store.usage.applyDeltas([day('2025-01-30', 100), day('2025-02-01', 300), day('2025-01-31', 200)]);
    await api.store.usage.applyDeltas([
      { accountId: api.b.account.id, month: '2025-01', day: '2025-01-31', bytes: 999, requests: 9, peakTunnels: 9 },
    ]);
  });
  after(() => api.close());

  it('GET /v1/usage reports plan limits and live tunnels, metered bytes and domains', async () => {
    api.live.set('tun_1', api.a.account.id).set('tun_2', api.a.account.id).set('tun_3', api.b.account.id);
    api.meterBytes.set(api.a.account.id, 12_345);
    const usage = Usage.parse((await api.call('GET', '/v1/usage')).body);
    assert.deepEqual(usage, {
      plan: 'free',
      limits: { domains: DEFAULT_PLANS.free.domains, tunnels: DEFAULT_PLANS.free.tunnels, bandwidthBytes: 53_687_091_200 },
      used: { domains: 0, tunnels: 2, bandwidthBytes: 12_345 },
    });
  });

  it('counts the custom domains of the account', async () => {
    await api.store.domains.create({ accountId: api.b.account.id, host: 'app.example.com', txtValue: 'svc-verify-abc' });
    const usage = Usage.parse((await api.call('GET', '/v1/usage', { token: api.b.token })).body);
    assert.equal(usage.used.domains, 1);
    assert.equal(usage.limits.bandwidthBytes, DEFAULT_PLANS.pro.bandwidthBytes);
  });

  it('GET /v1/usage/history lists days newest first with the documented fields', async () => {
    const { days } = UsageHistory.parse((await api.call('GET', '/v1/usage/history')).body);
    assert.deepEqual(days, [
      { date: '2025-02-01', bandwidthBytes: 300, requests: 2, peakTunnels: 1 },
      { date: '2025-01-31', bandwidthBytes: 200, requests: 2, peakTunnels: 1 },
      { date: '2025-01-30', bandwidthBytes: 100, requests: 2, peakTunnels: 1 },
    ]);
  });

  it('limits history to from..to inclusive', async () => {
    const { days } = UsageHistory.parse((await api.call('GET', '/v1/usage/history?from=2025-01-31&to=2025-01-31')).body);
    assert.deepEqual(
      days.map((d) => d.date),
      ['2025-01-31'],
    );
  });

  for (const [query, field] of [
    ['?from=2025-02-01&to=2025-01-01', 'from'],
    ['?from=2025-13-01', 'from'],
    ['?to=yesterday', 'to'],
  ] as const) {
    it(`answers 400 naming ${field} for ${query}`, async () => {
      const res = await api.call('GET', `/v1/usage/history${query}`);
      assert.equal(res.status, 400);
      assert.match((res.body as { message: string }).message, new RegExp(`query parameter "${field}"`));
    });
  }
});
