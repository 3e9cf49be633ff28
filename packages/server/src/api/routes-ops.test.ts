import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { PROMETHEUS_CONTENT_TYPE } from './routes-ops.js';
import { startApiFixture, type ApiFixture } from './test-support.js';

describe('operational endpoints', () => {
  const fixtures: ApiFixture[] = [];
  const start = async (...args: Parameters<typeof startApiFixture>) => {
    const api = await startApiFixture(...args);
    fixtures.push(api);
    return api;
  };
  after(() => Promise.all(fixtures.map((f) => f.close())));

  it('GET /healthz answers 200 {"status":"ok"} without a token', async () => {
    const api = await start();
    const res = await api.call('GET', '/healthz', { token: null });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok' });
  });

  it('GET /readyz answers 200 when the store answers and the listeners are up', async () => {
    const api = await start();
    const res = await api.call('GET', '/readyz', { token: null });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ready', checks: { store: 'ok', listeners: 'ok' } });
  });

  it('GET /readyz answers 503 naming the store when its query fails', async () => {
    const api = await start({ ops: { pingStore: () => Promise.reject(new Error('connection refused')) } });
    const res = await api.call('GET', '/readyz', { token: null });
    assert.equal(res.status, 503);
    assert.deepEqual(res.body, { status: 'unavailable', checks: { store: 'failed', listeners: 'ok' } });
  });

  it('GET /readyz answers 503 when the store does not answer in time', async () => {
    const api = await start({ ops: { pingStore: () => new Promise(() => undefined), readyTimeoutMs: 20 } });
    const res = await api.call('GET', '/readyz', { token: null });
    assert.equal(res.status, 503);
    assert.equal((res.body as { checks: { store: string } }).checks.store, 'failed');
  });

  it('GET /readyz answers 503 when the listeners are down', async () => {
    const api = await start({ ops: { listening: () => false } });
    const res = await api.call('GET', '/readyz', { token: null });
    assert.equal(res.status, 503);
    assert.deepEqual(res.body, { status: 'unavailable', checks: { store: 'ok', listeners: 'failed' } });
  });

  it('GET /metrics serves the registry as Prometheus text', async () => {
    const text = '# TYPE svc_up gauge\nsvc_up 1\n';
    const api = await start({ ops: { metrics: { render: () => text } } });
    const res = await api.call('GET', '/metrics', { token: null });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), PROMETHEUS_CONTENT_TYPE);
    assert.equal(res.text, text);
  });

  it('answers 405 with Allow for another method, and 404 for /metrics without a registry', async () => {
    const api = await start();
    const post = await api.call('POST', '/healthz', { token: null });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET');
    assert.equal((await api.call('GET', '/metrics', { token: null })).status, 404);
  });
});
