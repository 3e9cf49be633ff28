import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startAgent, startOrigin, startServer, visit, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { SseClient } from '@svcrouter/testkit/sse-client';
import { apiClient, assertNoneOf, eventually, openApi, type OpenApiDoc } from './harness/api-helpers.js';

// Cross-account isolation matrix: account B calls every route of the published OpenAPI
// document against account A's tunnels, requests, keys and domains. Every id route answers
// 404, lists show none of A's data, and A's resources are untouched afterwards.

type Json = Record<string, unknown>;

describe('REST API: cross-account isolation', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let agentA: TestAgent;
  let doc: OpenApiDoc;
  let api: ReturnType<typeof apiClient>;
  let tokenA: string;
  let tokenB: string;
  const idsOfA: { tunnels: string[]; keys: string[]; domains: string[]; webhooks: string[]; 'tcp-addresses': string[] } = {
    tunnels: [],
    keys: [],
    domains: [],
    webhooks: [],
    'tcp-addresses': [],
  };
  const secretsOfA: string[] = [];

  before(async () => {
    // A receiver on loopback is refused unless private addresses are allowed; nothing listens on it.
    server = await startServer({ env: { SVC_WEBHOOK_ALLOW_PRIVATE: 'true' } });
    tokenA = server.token!;
    tokenB = await server.createAccount('bob@example.com', 'pro');
    origin = await startOrigin();
    agentA = await startAgent(server, { token: tokenA, target: origin.port, subdomain: 'alice-app' });
    doc = await openApi(server);
    api = apiClient(server, doc);

    const me = (await api('GET', '/v1/me', { token: tokenA })).body as Json;
    const extraKey = (await api('POST', '/v1/keys', { token: tokenA }, { description: 'alice-ci' })).body as Json;
    const keys = ((await api('GET', '/v1/keys', { token: tokenA })).body as { keys: Json[] }).keys;
    const tunnels = ((await api('GET', '/v1/tunnels', { token: tokenA })).body as { tunnels: Json[] }).tunnels;
    idsOfA.keys = keys.map((k) => k.id as string);
    idsOfA.tunnels = tunnels.map((t) => t.id as string);
    secretsOfA.push(me.id as string, me.email as string, tokenA, extraKey.token as string, 'alice-ci', agentA.hostname);
    secretsOfA.push(...idsOfA.keys, ...keys.map((k) => k.prefix as string), ...idsOfA.tunnels);

    await visit(server, agentA.hostname, '/status/200?secret=alice');
    const requests = await eventually(
      () => api('GET', '/v1/requests', { token: tokenA }),
      (r) => (r.body as { requests: Json[] }).requests.length > 0,
      "A's request captured",
    );
    secretsOfA.push(...(requests.body as { requests: Json[] }).requests.map((r) => r.id as string));

    // Custom domains join the matrix as soon as their routes exist.
    if (doc.paths['/v1/domains']?.post) {
      const added = await api('POST', '/v1/domains', { token: tokenA }, { host: 'alice-domain.example.com' });
      assert.ok(added.status === 200 || added.status === 201, added.text);
      idsOfA.domains = [(added.body as Json).id as string];
      secretsOfA.push('alice-domain.example.com', ...idsOfA.domains);
    }
    const hook = await api('POST', '/v1/webhooks', { token: tokenA }, { url: 'http://127.0.0.1:9/alice-hook', events: ['tunnel.offline'] });
    assert.equal(hook.status, 201, hook.text);
    idsOfA.webhooks = [(hook.body as Json).id as string];
    secretsOfA.push('alice-hook', (hook.body as Json).secret as string, ...idsOfA.webhooks);
    const reserved = await api('POST', '/v1/tcp-addresses', { token: tokenA }, {});
    assert.equal(reserved.status, 201, reserved.text);
    idsOfA['tcp-addresses'] = [(reserved.body as Json).id as string];
    secretsOfA.push(...idsOfA['tcp-addresses']);
  });
  after(async () => {
    await agentA?.close();
    await origin?.close();
    await server?.close();
  });

  const operations = (): Array<{ method: string; template: string }> =>
    Object.entries(doc.paths).flatMap(([template, ops]) => Object.keys(ops).map((method) => ({ method: method.toUpperCase(), template })));

  it("every route with an id answers 404 to B for each of A's ids, and echoes nothing of A", async () => {
    const idRoutes = operations().filter((op) => op.template.includes('{id}'));
    assert.ok(idRoutes.length >= 2);
    for (const { method, template } of idRoutes) {
      const resource = template.split('/')[2]!;
      const ids = (idsOfA as Record<string, string[] | undefined>)[resource];
      assert.ok(ids, `${method} ${template}: no isolation case for "${resource}" ids; add one`);
      if (resource === 'domains' && ids.length === 0) continue;
      assert.ok(ids.length > 0, `A has no ${resource}`);
      for (const id of ids) {
        const path = template.replace('{id}', encodeURIComponent(id));
        const res = await api(
          method,
          path,
          { token: tokenB },
          method === 'POST' || method === 'PUT' || method === 'PATCH' ? {} : undefined,
        );
        assert.equal(res.status, 404, `${method} ${path} as B answered ${res.status}: ${res.text}`);
        assert.equal((res.body as Json).error, 'not_found');
        assertNoneOf(res.text, secretsOfA, `${method} ${path} as B`);
      }
    }
  });

  /** Event streams never end, so they are read as streams (below), not as one answer. */
  const isEventStream = (op: { method: string; template: string }): boolean =>
    Object.values(doc.paths[op.template]![op.method.toLowerCase()]!.responses).some(
      (response) => response.content?.['text/event-stream'] !== undefined,
    );

  it('every list and read route shows B nothing of A', async () => {
    const reads = operations().filter((op) => op.method === 'GET' && !op.template.includes('{') && !isEventStream(op));
    for (const { template } of reads) {
      const res = await api('GET', template, { token: tokenB });
      assert.equal(res.status, 200, `${template}: ${res.text}`);
      assertNoneOf(res.text, secretsOfA, `GET ${template} as B`);
    }
  });

  it("filters naming A's host or tunnel give B an empty page", async () => {
    for (const query of [`host=${agentA.hostname}`, `tunnel=${idsOfA.tunnels[0]}`]) {
      const res = await api('GET', `/v1/requests?${query}`, { token: tokenB });
      assert.deepEqual(res.body, { requests: [], nextCursor: null });
    }
  });

  it("B's usage counts none of A's tunnels or bytes", async () => {
    const usage = (await api('GET', '/v1/usage', { token: tokenB })).body as { used: Json };
    assert.deepEqual(usage.used, { domains: 0, tunnels: 0, bandwidthBytes: 0 });
  });

  it("A's tunnel, keys and domains are untouched afterwards", async () => {
    const tunnels = ((await api('GET', '/v1/tunnels', { token: tokenA })).body as { tunnels: Json[] }).tunnels;
    assert.ok(tunnels.some((t) => t.host === agentA.hostname && t.status === 'online'));
    const keys = ((await api('GET', '/v1/keys', { token: tokenA })).body as { keys: Json[] }).keys;
    assert.deepEqual(keys.map((k) => k.id).sort(), [...idsOfA.keys].sort());
    assert.equal((await visit(server, agentA.hostname, '/')).status, 200);
    const webhooks = (await api('GET', '/v1/webhooks', { token: tokenA })).text;
    assert.ok(webhooks.includes(idsOfA.webhooks[0]!));
    const tcpAddresses = (await api('GET', '/v1/tcp-addresses', { token: tokenA })).text;
    assert.ok(tcpAddresses.includes(idsOfA['tcp-addresses'][0]!));
    if (idsOfA.domains.length > 0) {
      const domains = (await api('GET', '/v1/domains', { token: tokenA })).text;
      assert.ok(domains.includes(idsOfA.domains[0]!));
    }
  });

  // Last: B starts a tunnel of its own here, which the usage case above must not see.
  it("every event stream shows B nothing of A, live or stored, even filtered by A's host", async () => {
    const streams = operations().filter(isEventStream);
    assert.deepEqual(
      streams.map((op) => op.template),
      ['/v1/requests/stream'],
    );
    const open = async (query: string, token: string): Promise<SseClient> => {
      const client = await SseClient.open(`${server.url}/v1/requests/stream${query}`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(client.status, 200);
      await client.until((events) => events.length >= 1, 'the stream to open');
      return client;
    };
    const agentB = await startAgent(server, { token: tokenB, target: origin.port, subdomain: 'bob-app' });
    const since = `since=${new Date(0).toISOString()}`;
    const ofB = [await open('', tokenB), await open(`?${since}`, tokenB), await open(`?host=${agentA.hostname}&${since}`, tokenB)];
    const ofA = await open('', tokenA);
    try {
      await visit(server, agentA.hostname, '/status/200?secret=alice-live');
      await ofA.until(() => ofA.count() >= 1, "A's live record");
      // Published after A's record: once B's own record arrives, A's would have too.
      await visit(server, agentB.hostname, '/status/200?bob');
      await ofB[0]!.until(() => ofB[0]!.count() >= 1, "B's own record");
      await ofB[1]!.until(() => ofB[1]!.count() >= 1, "B's own record after its stored ones");
      for (const client of ofB) {
        assertNoneOf(client.text, [...secretsOfA, 'alice-live'], 'GET /v1/requests/stream as B');
        assert.ok(client.named().every((e) => (JSON.parse(e.data!) as Json).host === agentB.hostname));
      }
      assert.equal(ofB[2]!.count(), 0);
    } finally {
      for (const client of [...ofB, ofA]) client.close();
      await agentB.close();
    }
  });
});
