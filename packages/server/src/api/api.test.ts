import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { defineRoute } from './define-route.js';
import { MAX_JSON_BODY_BYTES } from './http-io.js';
import { startApiFixture, type ApiFixture } from './test-support.js';

// The front door: authentication, routing, validation and the one error translation.

describe('api front door', () => {
  let api: ApiFixture;
  const leaky = defineRoute({
    method: 'GET',
    path: '/v1/test/leaky',
    tag: 'test',
    summary: 'answers a field its schema does not list',
    status: 200,
    response: z.strictObject({ id: z.string() }),
    responseDescription: 'x',
    async handler() {
      return { id: 'x', tokenHash: 'secret-hash' } as { id: string };
    },
  });
  const broken = defineRoute({
    method: 'GET',
    path: '/v1/test/broken',
    tag: 'test',
    summary: 'throws',
    status: 204,
    responseDescription: 'x',
    async handler() {
      throw new Error('database exploded at /srv/secret/path');
    },
  });

  before(async () => {
    api = await startApiFixture({ extraRoutes: [leaky, broken] });
  });
  after(() => api.close());

  const badCredentials: Array<[string, Record<string, string>]> = [
    ['no Authorization header', {}],
    ['a non-Bearer scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['Bearer without a token', { authorization: 'Bearer ' }],
    ['a token in quotes', { authorization: `Bearer "svc_${'a'.repeat(43)}"` }],
    ['a well-formed unknown token', { authorization: `Bearer svc_${'a'.repeat(43)}` }],
  ];
  for (const [name, headers] of badCredentials) {
    it(`answers 401 with exactly {"error":"unauthorized"} for ${name}`, async () => {
      const res = await api.call('GET', '/v1/me', { token: null, headers });
      assert.equal(res.status, 401);
      assert.equal(res.text, '{"error":"unauthorized"}');
    });
  }

  it('answers 401 rather than 404 for an unknown /v1 path without a token (no probing)', async () => {
    const res = await api.call('GET', '/v1/nothing-here', { token: null });
    assert.equal(res.status, 401);
  });

  it('answers 404 in the error shape for an unknown /v1 path with a token', async () => {
    const res = await api.call('GET', '/v1/nothing-here');
    assert.equal(res.status, 404);
    assert.deepEqual(Object.keys(res.body as object), ['error', 'message']);
    assert.equal((res.body as { error: string }).error, 'not_found');
  });

  it('answers 405 with an Allow header for a known path and another method', async () => {
    const res = await api.call('PUT', '/v1/keys');
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET, POST');
    assert.equal((res.body as { error: string }).error, 'method_not_allowed');
  });

  it('rejects an undocumented query parameter with 400 naming it and listing the accepted ones', async () => {
    const res = await api.call('GET', '/v1/usage/history?form=2025-01-01');
    assert.equal(res.status, 400);
    const body = res.body as { error: string; message: string };
    assert.equal(body.error, 'invalid_request');
    assert.match(body.message, /unknown query parameter "form"; this endpoint accepts from, to/);
  });

  it('rejects any query parameter on a route that takes none', async () => {
    const res = await api.call('GET', '/v1/me?verbose=1');
    assert.equal(res.status, 400);
    assert.match((res.body as { message: string }).message, /"verbose".*no query parameters/);
  });

  it('rejects a repeated query parameter', async () => {
    const res = await api.call('GET', '/v1/requests?limit=1&limit=2');
    assert.equal(res.status, 400);
    assert.match((res.body as { message: string }).message, /"limit" is given more than once/);
  });

  it('rejects an unknown body field with 400 naming it', async () => {
    const res = await api.call('POST', '/v1/keys', { body: { description: 'ci', scopes: ['all'] } });
    assert.equal(res.status, 400);
    assert.match((res.body as { message: string }).message, /unknown body field "scopes"/);
  });

  it('names the body field whose value is invalid', async () => {
    const res = await api.call('POST', '/v1/keys', { body: { description: 7 } });
    assert.equal(res.status, 400);
    assert.equal((res.body as { message: string }).message, 'body field "description" must be a string');
  });

  it('answers 400 invalid_json for a malformed body', async () => {
    const res = await api.call('POST', '/v1/keys', { body: '{"description":' });
    assert.equal(res.status, 400);
    assert.equal((res.body as { error: string }).error, 'invalid_json');
  });

  it('answers 400 for a JSON body that is not an object', async () => {
    const res = await api.call('POST', '/v1/keys', { body: '"hello"' });
    assert.equal(res.status, 400);
    assert.equal((res.body as { message: string }).message, 'the request body must be a JSON object');
  });

  it('answers 415 for a body that is not application/json', async () => {
    const res = await api.call('POST', '/v1/keys', {
      body: 'description=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(res.status, 415);
    assert.equal((res.body as { error: string }).error, 'unsupported_media_type');
  });

  it('answers 413 for a body over the limit', async () => {
    const res = await api.call('POST', '/v1/keys', { body: { description: 'x'.repeat(MAX_JSON_BODY_BYTES) } });
    assert.equal(res.status, 413);
    assert.equal((res.body as { error: string }).error, 'payload_too_large');
  });

  it('answers a failing handler with a bare 500 and logs the error once', async () => {
    const res = await api.call('GET', '/v1/test/broken');
    assert.equal(res.status, 500);
    assert.deepEqual(res.body, { error: 'internal', message: 'the server could not complete the request' });
    assert.doesNotMatch(res.text, /exploded|secret|at /);
    assert.equal(api.logLines.filter((line) => line.includes('database exploded')).length, 1);
  });

  it('refuses to send a response with a field its schema does not list (500, nothing leaked)', async () => {
    const res = await api.call('GET', '/v1/test/leaky');
    assert.equal(res.status, 500);
    assert.doesNotMatch(res.text, /secret-hash|tokenHash/);
    assert.ok(api.logLines.some((line) => line.includes('response does not match its schema') && !line.includes('secret-hash')));
  });

  it('serves the OpenAPI document without a token', async () => {
    const res = await api.call('GET', '/v1/openapi.json', { token: null });
    assert.equal(res.status, 200);
    assert.equal((res.body as { openapi: string }).openapi, '3.1.0');
  });

  it('never logs the Authorization header or the token', async () => {
    await api.call('GET', '/v1/me');
    await api.call('GET', '/v1/me', { token: null, headers: { authorization: 'Bearer svc_not-a-real-token' } });
    const all = api.logLines.join('\n');
    assert.ok(all.includes('"msg":"api request"'), 'requests are logged at debug');
    assert.ok(!all.includes(api.a.token));
    assert.doesNotMatch(all, /authorization|Bearer|svc_not-a-real-token/i);
  });
});
