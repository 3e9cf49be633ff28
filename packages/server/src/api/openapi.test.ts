import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApiFixture, type ApiFixture } from './test-support.js';

type Doc = {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      {
        security?: unknown[];
        parameters?: Array<{ name: string; in: string; schema?: unknown }>;
        responses: Record<string, { content?: Record<string, unknown> }>;
        requestBody?: unknown;
      }
    >
  >;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, { type: string; scheme: string }> };
  security: unknown[];
};

describe('OpenAPI document', () => {
  let api: ApiFixture;
  let doc: Doc;
  before(async () => {
    api = await startApiFixture({ ops: { metrics: { render: () => '' } } });
    doc = (await api.call('GET', '/v1/openapi.json', { token: null })).body as Doc;
  });
  after(() => api.close());

  const operation = (method: string, path: string) => doc.paths[path.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()];

  it('is OpenAPI 3.1 with a bearer security scheme required by default', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.components.securitySchemes.bearer?.type, 'http');
    assert.equal(doc.components.securitySchemes.bearer?.scheme, 'bearer');
    assert.deepEqual(doc.security, [{ bearer: [] }, { session: [] }]);
  });

  it('lists every registered route, and nothing else', () => {
    const listed = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    const registered = [...api.routes.map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`), 'GET /v1/openapi.json'];
    assert.deepEqual(listed.sort(), registered.sort());
  });

  it('marks public routes with an empty security list, and only those', () => {
    for (const route of api.routes) {
      const op = operation(route.method, route.path)!;
      assert.equal(op.security !== undefined, route.public === true, `${route.method} ${route.path}`);
    }
  });

  it('documents path and query parameters from the schemas', () => {
    assert.deepEqual(
      operation('DELETE', '/v1/keys/:id')!.parameters?.map((p) => `${p.in}:${p.name}`),
      ['path:id'],
    );
    assert.deepEqual(
      operation('GET', '/v1/requests')!.parameters?.map((p) => p.name),
      ['limit', 'cursor', 'host', 'tunnel', 'status', 'method', 'since', 'until'],
    );
    assert.deepEqual(
      operation('GET', '/v1/requests/stream')!.parameters?.map((p) => p.name),
      ['host', 'tunnel', 'status', 'method', 'since'],
    );
    const status = operation('GET', '/v1/requests/stream')!.parameters?.find((p) => p.name === 'status');
    assert.deepEqual(status?.schema, operation('GET', '/v1/requests')!.parameters?.find((p) => p.name === 'status')?.schema);
    assert.ok(operation('GET', '/v1/requests/stream')!.responses['200']?.content?.['text/event-stream']);
    const limit = operation('GET', '/v1/requests')!.parameters?.find((p) => p.name === 'limit');
    assert.deepEqual(limit, {
      name: 'limit',
      in: 'query',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 1000 },
      description: 'page size, default 50',
    });
  });

  it('documents bodies, success and error responses, every $ref resolving', () => {
    const create = operation('POST', '/v1/keys')!;
    assert.ok(create.requestBody);
    assert.deepEqual(Object.keys(create.responses).sort(), ['201', '400', '401', '403', '413', '415', 'default'].sort());
    assert.deepEqual(
      Object.keys(operation('DELETE', '/v1/keys/:id')!.responses).sort(),
      ['204', '400', '401', '403', '404', '409', 'default'].sort(),
    );
    const refs = JSON.stringify(doc).match(/"\$ref":"#\/components\/schemas\/[A-Za-z]+"/g) ?? [];
    assert.ok(refs.length > 10);
    for (const ref of refs) {
      const name = ref.split('/').at(-1)!.replace('"', '');
      assert.ok(doc.components.schemas[name], `missing component ${name}`);
    }
    for (const name of [
      'Error',
      'Unauthorized',
      'Account',
      'Usage',
      'UsageHistory',
      'TunnelList',
      'RequestPage',
      'KeyList',
      'CreatedKey',
    ]) {
      assert.ok(doc.components.schemas[name], name);
    }
  });

  it('lists a route added later without schemas, with its path parameter', async () => {
    const extra = await startApiFixture({
      extraRoutes: [{ method: 'POST', path: '/v1/domains/:id/verify', async handler() {} }],
    });
    try {
      const body = (await extra.call('GET', '/v1/openapi.json', { token: null })).body as Doc;
      const op = body.paths['/v1/domains/{id}/verify']?.post;
      assert.deepEqual(
        op?.parameters?.map((p) => p.name),
        ['id'],
      );
      assert.ok(op?.responses['404'] && op.responses['401']);
    } finally {
      await extra.close();
    }
  });
});
