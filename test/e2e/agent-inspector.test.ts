import assert from 'node:assert/strict';
import http from 'node:http';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import type { InspectedRequest } from '@svcrouter/sdk';
import { runAgent, serverSuite, spawnAgent, splitFailure, startAgent, visit, type TestAgent } from './harness/index.js';

/** Starts `svc http` with its inspector on a free loopback port; resolves with the inspector's URL too. */
async function startInspected(system: ReturnType<typeof serverSuite>): Promise<{ agent: TestAgent; inspector: string }> {
  const { server, origin } = system;
  const agent = await startAgent(server, { token: server.token, target: origin.port, args: ['--inspect-addr', '127.0.0.1:0'] });
  const match = await agent.proc.waitForLine(/^Inspector (http:\/\/127\.0\.0\.1:\d+)$/);
  return { agent, inspector: match[1]! };
}

/** A JSON body as the tests read it: field by field, checked by the assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** One request to the inspector with full control of the headers (fetch will not forge Host). */
function call(base: string, method: string, path: string, headers: http.OutgoingHttpHeaders = {}, body?: string) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; json: Json }>((resolve, reject) => {
    const request = http.request(`${base}${path}`, { method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: response.statusCode!, headers: response.headers, json: text.startsWith('{') ? JSON.parse(text) : text });
      });
    });
    request.on('error', reject);
    request.end(body);
  });
}

const json = { 'content-type': 'application/json' };
const decode = (body: { base64: string }) => Buffer.from(body.base64, 'base64').toString();

// The local inspector: captured requests over a JSON API, replay with edits, and its guards.
describe('local inspector', () => {
  const system = serverSuite();

  it('GET /api/requests lists captured requests newest first, with headers, bodies, status and timing', async () => {
    const { agent, inspector } = await startInspected(system);
    try {
      await visit(system.server, agent.hostname, '/echo?first', { method: 'POST', body: '{"n":1}', headers: json });
      await visit(system.server, agent.hostname, '/status/404');
      await agent.proc.waitForLine(/GET \/status\/404 404/);
      const { status, json: list } = await call(inspector, 'GET', '/api/requests');
      assert.equal(status, 200);
      const [newest, first] = list.requests as InspectedRequest[];
      assert.deepEqual([newest!.path, newest!.status, first!.path, first!.method], ['/status/404', 404, '/echo?first', 'POST']);
      assert.match(first!.id, /^req_\d+$/);
      assert.equal(typeof first!.durationMs, 'number');
      assert.equal(first!.tunnel, agent.url);
      assert.deepEqual(first!.request.body, { size: 7, truncated: false, base64: Buffer.from('{"n":1}').toString('base64') });
      assert.ok(first!.request.headers.some(([name, value]) => name.toLowerCase() === 'content-type' && value === 'application/json'));
      assert.ok(first!.response!.headers.some(([name]) => name.toLowerCase() === 'content-type'));
      assert.equal(JSON.parse(decode(first!.response!.body)).method, 'POST');
      const one = await call(inspector, 'GET', `/api/requests/${first!.id}`);
      assert.deepEqual(one.json, first);
      assert.equal((await call(inspector, 'GET', '/api/requests/req_999999')).status, 404);
      const tunnels = await call(inspector, 'GET', '/api/tunnels');
      assert.deepEqual(
        tunnels.json.tunnels.map((tunnel: Json) => [tunnel.url, tunnel.local]),
        [[agent.url, `http://localhost:${system.origin.port}`]],
      );
    } finally {
      await agent.close();
    }
  });

  it('POST /api/requests/:id/replay sends it again, edited or not, and answers with the new capture', async () => {
    const { agent, inspector } = await startInspected(system);
    try {
      await visit(system.server, agent.hostname, '/echo', { method: 'POST', body: 'original', headers: { 'content-type': 'text/plain' } });
      await agent.proc.waitForLine(/POST \/echo 200/);
      const original = ((await call(inspector, 'GET', '/api/requests')).json.requests as InspectedRequest[])[0]!;
      const same = await call(inspector, 'POST', `/api/requests/${original.id}/replay`);
      assert.equal(same.status, 200);
      assert.equal(same.json.replayOf, original.id);
      assert.equal(JSON.parse(decode(same.json.response.body)).bodySha256, createHash('sha256').update('original').digest('hex'));
      const edited = await call(
        inspector,
        'POST',
        `/api/requests/${original.id}/replay`,
        json,
        JSON.stringify({ method: 'put', path: '/echo?edited', body: 'changed!' }),
      );
      assert.equal(edited.status, 200, JSON.stringify(edited.json));
      const echoed = JSON.parse(decode(edited.json.response.body));
      assert.deepEqual([echoed.method, echoed.url, echoed.bodyLength], ['PUT', '/echo?edited', 8]);
      assert.equal(system.origin.seen.at(-1)!.url, '/echo?edited');
      const list = (await call(inspector, 'GET', '/api/requests')).json.requests as InspectedRequest[];
      assert.equal(list[0]!.id, edited.json.id, 'the replay is captured too, newest first');
      const bad = await call(inspector, 'POST', `/api/requests/${original.id}/replay`, json, JSON.stringify({ path: 'no-slash' }));
      assert.deepEqual([bad.status, bad.json.error], [400, 'invalid_edit']);
    } finally {
      await agent.close();
    }
  });

  it('refuses a foreign Host (DNS rebinding) with 403, on the UI and the API alike', async () => {
    const { agent, inspector } = await startInspected(system);
    try {
      const port = new URL(inspector).port;
      for (const path of ['/', '/api/requests']) {
        const rebound = await call(inspector, 'GET', path, { host: `attacker.example:${port}` });
        assert.equal(rebound.status, 403, path);
      }
      assert.equal((await call(inspector, 'GET', '/api/requests', { host: `localhost:${port}` })).status, 200);
      assert.equal((await call(inspector, 'GET', '/api/requests', { host: `127.0.0.1:${Number(port) + 1}` })).status, 403);
    } finally {
      await agent.close();
    }
  });

  it('a replay needs an Origin of the inspector, or none; another site gets 403', async () => {
    const { agent, inspector } = await startInspected(system);
    try {
      await visit(system.server, agent.hostname, '/echo');
      await agent.proc.waitForLine(/GET \/echo 200/);
      const id = ((await call(inspector, 'GET', '/api/requests')).json.requests as InspectedRequest[])[0]!.id;
      const forged = await call(inspector, 'POST', `/api/requests/${id}/replay`, { ...json, origin: 'https://attacker.example' }, '{}');
      assert.deepEqual([forged.status, forged.json.error], [403, 'forbidden']);
      const seen = system.origin.seen.length;
      assert.equal((await call(inspector, 'POST', `/api/requests/${id}/replay`, { ...json, origin: inspector }, '{}')).status, 200);
      assert.equal((await call(inspector, 'POST', `/api/requests/${id}/replay`, json, '{}')).status, 200);
      assert.equal(system.origin.seen.length, seen + 2, 'only the two allowed replays reached the origin');
    } finally {
      await agent.close();
    }
  });

  it('listens on loopback only, with a strict CSP; a network address is refused, and --inspect=false turns it off', async () => {
    const { agent, inspector } = await startInspected(system);
    try {
      const page = await call(inspector, 'GET', '/');
      assert.equal(page.status, 200);
      assert.match(String(page.headers['content-security-policy']), /default-src 'none'; script-src 'self'/);
      assert.equal(page.headers['x-frame-options'], 'DENY');
    } finally {
      await agent.close();
    }
    const exposed = await runAgent(['http', String(system.origin.port), '--inspect-addr', '0.0.0.0:0'], {
      SVC_TOKEN: system.server.token!,
      SVC_SERVER: system.server.url,
    });
    assert.equal(exposed.code, 2, 'a usage error, before anything connects');
    assert.match(splitFailure(exposed.stderr).sentence, /--inspect-addr must be a loopback address/);
    const off = spawnAgent(system.server, { token: system.server.token, target: system.origin.port, args: ['--inspect=false'] });
    await off.waitForLine(/^Forwarding /);
    assert.ok(!off.lines.some((line) => line.startsWith('Inspector')));
    assert.equal((await off.kill('SIGINT')).code, 0);
  });
});
