import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { ApiClient, ApiError } from './api-client.js';

// ApiClient's own behaviour against a local HTTP server that records what it receives:
// URLs, bodies, the token's privacy, and error bodies that are not the API's.

describe('ApiClient', () => {
  let server: http.Server;
  let baseUrl: string;
  const received: Array<{ method: string; url: string; body: string; contentType: string | undefined }> = [];
  let answer: { status: number; body: string } = { status: 204, body: '' };

  before(async () => {
    const record = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
      let body = '';
      for await (const chunk of req) body += String(chunk);
      received.push({ method: req.method ?? '', url: req.url ?? '', body, contentType: req.headers['content-type'] });
      res.writeHead(answer.status, answer.body ? { 'content-type': 'application/json' } : {}).end(answer.body);
    };
    // A request that fails to arrive whole ends in a destroyed response, which fails the client's call.
    server = http.createServer((req, res) => {
      record(req, res).catch((error: unknown) => res.destroy(error instanceof Error ? error : new Error(String(error))));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.close();
    await once(server, 'close');
  });

  it('without baseUrl or SVC_SERVER, talks to http://localhost:8080', () => {
    const saved = process.env.SVC_SERVER;
    delete process.env.SVC_SERVER;
    try {
      assert.equal(new ApiClient({ token: 'svc_x' }).baseUrl, 'http://localhost:8080');
      process.env.SVC_SERVER = '';
      assert.equal(new ApiClient({ token: 'svc_x' }).baseUrl, 'http://localhost:8080', 'an empty variable counts as unset');
    } finally {
      if (saved === undefined) delete process.env.SVC_SERVER;
      else process.env.SVC_SERVER = saved;
    }
  });

  it('keeps the token out of inspection and JSON', () => {
    const client = new ApiClient({ baseUrl, token: 'svc_private' });
    assert.ok(!inspect(client, { depth: 10 }).includes('svc_private'));
    assert.ok(!JSON.stringify(client).includes('svc_private'));
  });

  it('encodes path parameters, drops unset filters, sends JSON bodies, and resolves 204 with undefined', async () => {
    const client = new ApiClient({ baseUrl: `${baseUrl}//`, token: 'svc_t' });
    answer = { status: 204, body: '' };
    assert.equal(await client.keys.delete('key/../me'), undefined);
    assert.equal(received.at(-1)!.url, '/v1/keys/key%2F..%2Fme');
    answer = { status: 200, body: '{"requests":[],"nextCursor":null}' };
    await client.requests.list({ method: 'GET', host: undefined, limit: 5 });
    assert.equal(received.at(-1)!.url, '/v1/requests?method=GET&limit=5');
    answer = { status: 201, body: '{"id":"key_1"}' };
    await client.keys.create({ description: 'ci' });
    assert.deepEqual(received.at(-1), { method: 'POST', url: '/v1/keys', body: '{"description":"ci"}', contentType: 'application/json' });
  });

  it("rejects with ApiError carrying the body's code and message, or unexpected_response without one", async () => {
    const client = new ApiClient({ baseUrl, token: 'svc_t' });
    answer = { status: 409, body: '{"error":"domain_exists","message":"already added"}' };
    await assert.rejects(client.domains.create('a.example.com'), new ApiError(409, 'domain_exists', 'already added'));
    answer = { status: 502, body: '<html>bad gateway</html>' };
    await assert.rejects(
      client.me(),
      (error: unknown) => error instanceof ApiError && error.status === 502 && error.code === 'unexpected_response',
    );
    answer = { status: 200, body: '{"id":' };
    await assert.rejects(client.me(), (error: unknown) => error instanceof ApiError && error.code === 'unexpected_response');
  });
});
