import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SVC_VERSION } from '@svcrouter/protocol';
import { startAgent, startOrigin, startServer, visit, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { apiClient, eventually, openApi, type ApiAnswer, type OpenApiDoc } from './harness/api-helpers.js';

// Every /v1 endpoint but requests and keys (api-requests, api-keys), against a real server
// and agent; every answer is checked against the published OpenAPI document.

type Json = Record<string, unknown>;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('REST API: account, usage, tunnels, errors, operations', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let agent: TestAgent;
  let doc: OpenApiDoc;
  let api: ReturnType<typeof apiClient>;
  let token: string;

  before(async () => {
    server = await startServer({ env: { SVC_USAGE_FLUSH_MS: '100' } });
    token = server.token!;
    origin = await startOrigin();
    agent = await startAgent(server, { token, target: origin.port });
    doc = await openApi(server);
    api = apiClient(server, doc);
  });
  after(async () => {
    await agent?.close();
    await origin?.close();
    await server?.close();
  });

  it('GET /v1/me returns id, email, name and plan', async () => {
    const res = await api('GET', '/v1/me', { token });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body as Json).sort(), ['email', 'id', 'name', 'plan']);
    assert.equal((res.body as Json).email, 'local@svcrouter.localhost');
    assert.equal((res.body as Json).plan, 'free');
  });

  it('GET /v1/usage returns the free limits, the live tunnel and the metered bytes', async () => {
    await visit(server, agent.hostname, '/bytes?n=200000');
    const res = await eventually(
      () => api('GET', '/v1/usage', { token }),
      (r) => ((r.body as { used: { bandwidthBytes: number } }).used.bandwidthBytes ?? 0) >= 200_000,
      'metered bytes',
    );
    const usage = res.body as { plan: string; limits: Json; used: Json };
    assert.equal(usage.plan, 'free');
    assert.deepEqual(usage.limits, { domains: 2, tunnels: 10, bandwidthBytes: 53_687_091_200 });
    assert.equal(usage.used.tunnels, 1);
    assert.equal(usage.used.domains, 0);
  });

  it('GET /v1/usage/history lists today with the traffic, and honours from/to', async () => {
    const today = new Date().toISOString().slice(0, 10);
    await visit(server, agent.hostname, '/bytes?n=1000');
    const res = await eventually(
      () => api('GET', '/v1/usage/history', { token }),
      // Bytes are metered per chunk and the request counted when it ends, so one flush can
      // carry the bytes before the count: wait for both.
      (r) =>
        (r.body as { days: Array<{ date: string; bandwidthBytes: number; requests: number }> }).days.some(
          (d) => d.date === today && d.bandwidthBytes > 0 && d.requests >= 1,
        ),
      'today in the history',
    );
    const day = (res.body as { days: Json[] }).days[0]!;
    assert.deepEqual(Object.keys(day).sort(), ['bandwidthBytes', 'date', 'peakTunnels', 'requests']);
    assert.equal(day.date, today);
    assert.ok((day.requests as number) >= 1);
    const none = await api('GET', '/v1/usage/history?from=2000-01-01&to=2000-01-31', { token });
    assert.deepEqual(none.body, { days: [] });
    const only = await api('GET', `/v1/usage/history?from=${today}&to=${today}`, { token });
    assert.deepEqual(
      (only.body as { days: Json[] }).days.map((d) => d.date),
      [today],
    );
  });

  for (const [query, field] of [
    ['?from=2025-02-01&to=2025-01-01', 'from'],
    ['?from=2025-02-30', 'from'],
    ['?to=last-week', 'to'],
  ] as const) {
    it(`GET /v1/usage/history${query} is a 400 naming ${field}`, async () => {
      const res = await api('GET', `/v1/usage/history${query}`, { token });
      assert.equal(res.status, 400);
      assert.equal((res.body as Json).error, 'invalid_request');
      assert.match((res.body as Json).message as string, new RegExp(`"${field}"`));
    });
  }

  it('GET /v1/tunnels lists the live tunnel with id, status, url, host, createdAt, agentVersion, agentIp', async () => {
    const res = await api('GET', '/v1/tunnels', { token });
    const tunnel = (res.body as { tunnels: Json[] }).tunnels.find((t) => t.host === agent.hostname)!;
    assert.ok(tunnel);
    assert.match(tunnel.id as string, /^tun_/);
    assert.equal(tunnel.status, 'online');
    assert.equal(tunnel.url, agent.url);
    assert.match(tunnel.createdAt as string, ISO);
    assert.equal(tunnel.agentVersion, SVC_VERSION);
    assert.equal(tunnel.agentIp, '127.0.0.1');
  });

  it('DELETE /v1/tunnels/:id answers 204, the agent exits and the name is released; again is 404', async () => {
    const other = await startAgent(server, { token, target: origin.port, subdomain: 'api-core-doomed' });
    const list = await api('GET', '/v1/tunnels', { token });
    const id = (list.body as { tunnels: Json[] }).tunnels.find((t) => t.host === other.hostname)!.id as string;
    const res = await api('DELETE', `/v1/tunnels/${id}`, { token });
    assert.equal(res.status, 204);
    assert.equal(res.text, '');
    await other.proc.exited;
    const after = await api('GET', '/v1/tunnels', { token });
    assert.ok(!(after.body as { tunnels: Json[] }).tunnels.some((t) => t.id === id));
    assert.equal((await api('DELETE', `/v1/tunnels/${id}`, { token })).status, 404);
  });

  it('answers 404 in the error shape for an unknown id and an unknown /v1 path', async () => {
    for (const path of ['/v1/tunnels/tun_doesnotexist0000']) {
      const res = await api('DELETE', path, { token });
      assert.equal(res.status, 404);
      assert.deepEqual(Object.keys(res.body as Json), ['error', 'message']);
    }
    const unknown = await fetch(`${server.url}/v1/nope`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as Json).error, 'not_found');
  });

  it('answers 405 with an Allow header', async () => {
    const res = await fetch(`${server.url}/v1/tunnels`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET');
    assert.equal(((await res.json()) as Json).error, 'method_not_allowed');
  });

  it('rejects an undocumented query parameter on every GET endpoint with 400 naming it', async () => {
    for (const path of ['/v1/me', '/v1/usage', '/v1/usage/history', '/v1/tunnels', '/v1/requests', '/v1/keys']) {
      const res = await api('GET', `${path}?bogus=1`, { token });
      assert.equal(res.status, 400, path);
      assert.match((res.body as Json).message as string, /unknown query parameter "bogus"/, path);
    }
  });

  it('answers 401 with exactly {"error":"unauthorized"} for every bad credential', async () => {
    const variants: Array<[string, Record<string, string>]> = [
      ['missing header', {}],
      ['Basic scheme', { authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}` }],
      ['Bearer alone', { authorization: 'Bearer' }],
      ['token without scheme', { authorization: token }],
      ['quoted token', { authorization: `Bearer "${token}"` }],
      // Trailing whitespace never reaches the server (HTTP strips it); a leading pad does.
      ['padded token', { authorization: `Bearer  ${token}` }],
      ['truncated token', { authorization: `Bearer ${token.slice(0, -1)}` }],
      ['unknown token', { authorization: `Bearer svc_${'A'.repeat(43)}` }],
    ];
    for (const [name, headers] of variants) {
      const res = await fetch(`${server.url}/v1/me`, { headers });
      assert.equal(res.status, 401, name);
      assert.equal(await res.text(), '{"error":"unauthorized"}', name);
    }
  });

  it('serves OpenAPI 3.1 without a token, listing every endpoint', () => {
    const listed = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    for (const op of [
      'GET /v1/me',
      'GET /v1/usage',
      'GET /v1/usage/history',
      'GET /v1/tunnels',
      'DELETE /v1/tunnels/{id}',
      'GET /v1/requests',
      'GET /v1/requests/stream',
      'GET /v1/keys',
      'POST /v1/keys',
      'DELETE /v1/keys/{id}',
      'GET /v1/openapi.json',
      'GET /healthz',
      'GET /readyz',
      'GET /metrics',
    ]) {
      assert.ok(listed.includes(op), `${op} missing from OpenAPI`);
    }
    assert.equal((doc as unknown as Json).openapi, '3.1.0');
  });

  it('GET /healthz and /readyz answer on the apex without a token', async () => {
    const health: ApiAnswer = await api('GET', '/healthz', 'none');
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { status: 'ok' });
    const ready = await api('GET', '/readyz', 'none');
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, { status: 'ready', checks: { store: 'ok', listeners: 'ok' } });
  });

  it("GET /metrics serves Prometheus text on the apex; on a tunnel hostname /metrics is the tunnel's", async () => {
    const res = await api('GET', '/metrics', 'none');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    assert.match(res.text, /^# (HELP|TYPE) /m);
    const tunneled = await visit(server, agent.hostname, '/metrics');
    assert.equal(tunneled.text, 'hello from origin');
  });
});
