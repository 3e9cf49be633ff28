import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, it } from 'node:test';
import { Messages } from '@svcrouter/sdk';
import { serverSuite, startAgent, visit, type TestAgent } from './harness/index.js';

/** Starts `svc http` with its inspector (and so the agent API) on a free loopback port. */
async function startWithApi(system: ReturnType<typeof serverSuite>): Promise<{ agent: TestAgent; api: string }> {
  const { server, origin } = system;
  const agent = await startAgent(server, { token: server.token, target: origin.port, args: ['--inspect-addr', '127.0.0.1:0'] });
  const match = await agent.proc.waitForLine(/^Inspector (http:\/\/127\.0\.0\.1:\d+)$/);
  return { agent, api: `${match[1]!}/api/tunnels` };
}

/** A JSON answer as the tests read it, field by field. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** A call as a script makes it: Node's fetch. */
async function call(url: string, init: RequestInit = {}): Promise<{ status: number; json: Json; type: string | null }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, json: text === '' ? undefined : JSON.parse(text), type: response.headers.get('content-type') };
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  call(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

/** The public hostname of a tunnel URL. */
const hostOf = (url: string) => new URL(url).hostname;

// The agent API: tunnels started and stopped in a running agent over its one session.
describe('agent API', () => {
  const system = serverSuite({ env: { SVC_PLANS: JSON.stringify({ free: { tunnels: 3 } }) } });

  it('POST starts a tunnel over the running session, DELETE stops it, and the output says both', async () => {
    const { agent, api } = await startWithApi(system);
    try {
      const first = await call(api);
      assert.equal(first.status, 200);
      assert.deepEqual(first.json.tunnels, [
        {
          name: 'command_line',
          url: agent.url,
          proto: 'http1',
          local: `http://localhost:${system.origin.port}`,
          hostHeader: null,
          inspect: true,
        },
      ]);

      const added = await post(api, { name: 'second', addr: system.origin.port, hostHeader: 'rewrite' });
      assert.equal(added.status, 201, JSON.stringify(added.json));
      assert.equal(added.json.name, 'second');
      assert.match(added.json.url, /^https:\/\//);
      assert.equal(added.json.hostHeader, 'rewrite');
      await agent.proc.waitForLine(new RegExp(`^Tunnel second started: Forwarding ${added.json.url.replace(/[.]/g, '\\.')} -> `));
      const served = await visit(system.server, hostOf(added.json.url), '/echo');
      assert.equal(served.status, 200);
      assert.equal(JSON.parse(served.text).headers.host, `localhost:${system.origin.port}`, 'the host header rule applies');
      await agent.proc.waitForLine(/\[second\] GET \/echo 200/);
      assert.deepEqual(
        (await call(api)).json.tunnels.map((tunnel: Json) => tunnel.name),
        ['command_line', 'second'],
      );

      const removed = await call(`${api}/second`, { method: 'DELETE' });
      assert.equal(removed.status, 204);
      await agent.proc.waitForLine(/^Tunnel second stopped: https:\/\/\S+ is offline$/);
      const offline = await visit(system.server, hostOf(added.json.url), '/');
      assert.equal(offline.status, 404);
      assert.match(offline.text, new RegExp(Messages.TUNNEL_OFFLINE));
      assert.equal((await visit(system.server, agent.hostname, '/')).status, 200, 'the first tunnel still serves');
      const again = await call(`${api}/second`, { method: 'DELETE' });
      assert.deepEqual([again.status, again.json.error], [404, 'not_found']);

      // With none left the agent keeps running, and the next tunnel dials a new session.
      assert.equal((await call(`${api}/command_line`, { method: 'DELETE' })).status, 204);
      assert.deepEqual((await call(api)).json.tunnels, []);
      const third = await post(api, { name: 'third', addr: `localhost:${system.origin.port}` });
      assert.equal(third.status, 201, JSON.stringify(third.json));
      assert.equal((await visit(system.server, hostOf(third.json.url), '/')).status, 200);
    } finally {
      assert.deepEqual(await agent.close(), { code: 0, signal: null });
    }
  });

  it('refuses a foreign Origin and a foreign Host with 403, and starts nothing', async () => {
    const { agent, api } = await startWithApi(system);
    try {
      const foreign = await post(api, { name: 'evil', addr: 22 }, { origin: 'https://attacker.example' });
      assert.deepEqual([foreign.status, foreign.json.error], [403, 'forbidden']);
      assert.match(foreign.json.message, /Origin/);
      const port = new URL(api).port;
      const rebound = await new Promise<{ status: number; json: Json }>((resolve, reject) => {
        const request = http.request(
          api,
          { method: 'POST', headers: { host: `attacker.example:${port}`, 'content-type': 'application/json' }, agent: false },
          (response) => {
            let text = '';
            response.on('data', (chunk: Buffer) => (text += chunk.toString()));
            response.on('end', () => resolve({ status: response.statusCode!, json: JSON.parse(text) }));
          },
        );
        request.on('error', reject);
        request.end(JSON.stringify({ name: 'evil', addr: 22 }));
      });
      assert.deepEqual([rebound.status, rebound.json.error], [403, 'forbidden']);
      const own = await post(api, { name: 'own', addr: system.origin.port }, { origin: `http://127.0.0.1:${port}` });
      assert.equal(own.status, 201, 'the inspector page itself may start one');
      assert.deepEqual(
        (await call(api)).json.tunnels.map((tunnel: Json) => tunnel.name),
        ['command_line', 'own'],
      );
    } finally {
      await agent.close();
    }
  });

  it('answers bad bodies, a duplicate name and a wrong method with a precise status and JSON error', async () => {
    const { agent, api } = await startWithApi(system);
    try {
      const cases: Array<[string, Promise<{ status: number; json: Json; type: string | null }>, number, string, RegExp]> = [
        [
          'not JSON',
          call(api, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{name' }),
          400,
          'invalid_json',
          /not JSON/,
        ],
        ['no content type', call(api, { method: 'POST', body: '{}' }), 415, 'unsupported_media_type', /application\/json/],
        ['an array', post(api, [1]), 400, 'invalid_request', /JSON object/],
        ['no name', post(api, { addr: 3000 }), 400, 'invalid_request', /^name is required$/],
        ['no addr', post(api, { name: 'x' }), 400, 'invalid_request', /^addr is required$/],
        ['a bad name', post(api, { name: '-x', addr: 3000 }), 400, 'invalid_request', /^name: a tunnel name is/],
        ['a bad addr', post(api, { name: 'x', addr: 'ftp://nowhere' }), 400, 'invalid_request', /^addr: /],
        ['a bad proto', post(api, { name: 'x', addr: 3000, proto: 'udp' }), 400, 'invalid_request', /^proto: /],
        [
          'access rules on a TCP tunnel',
          post(api, { name: 'x', addr: 22, proto: 'tcp', basicAuth: ['alice:long-enough'] }),
          400,
          'invalid_request',
          /^basicAuth: applies to HTTP tunnels only/,
        ],
        ['a bad host header', post(api, { name: 'x', addr: 3000, hostHeader: 'a b' }), 400, 'invalid_request', /^hostHeader: /],
        [
          'an unknown key',
          post(api, { name: 'x', addr: 3000, rateLimits: {} }),
          400,
          'invalid_request',
          /^unknown key "rateLimits": a tunnel takes /,
        ],
        [
          'a duplicate name',
          post(api, { name: 'command_line', addr: 3000 }),
          409,
          'name_in_use',
          /already runs a tunnel named "command_line"/,
        ],
        ['a bad subdomain', post(api, { name: 'x', addr: 3000, subdomain: 'no_underscores' }), 400, 'name_invalid', /invalid subdomain/],
        ['a wrong method', call(`${api}/command_line`, { method: 'PUT' }), 405, 'method_not_allowed', /use DELETE/],
      ];
      for (const [what, answer, status, error, message] of cases) {
        const { status: got, json, type } = await answer;
        assert.equal(type, 'application/json; charset=utf-8', what);
        assert.deepEqual([got, json.error], [status, error], `${what}: ${JSON.stringify(json)}`);
        assert.match(json.message, message, what);
      }
      assert.equal((await call(api)).json.tunnels.length, 1, 'no refused body started a tunnel');
    } finally {
      await agent.close();
    }
  });

  it("the plan's tunnel limit answers 403 tunnel_limit, and the agent runs on", async () => {
    const { agent, api } = await startWithApi(system);
    try {
      for (const name of ['two', 'three']) assert.equal((await post(api, { name, addr: system.origin.port })).status, 201);
      const over = await post(api, { name: 'four', addr: system.origin.port });
      assert.deepEqual([over.status, over.json], [403, { error: 'tunnel_limit', message: Messages.TUNNEL_LIMIT }]);
      assert.equal((await call(`${api}/two`, { method: 'DELETE' })).status, 204);
      assert.equal((await post(api, { name: 'four', addr: system.origin.port })).status, 201, 'a freed slot takes the next');
      assert.equal((await visit(system.server, agent.hostname, '/')).status, 200);
    } finally {
      await agent.close();
    }
  });

  it('starts a tunnel with access rules: visitors must sign in, and GET /v1/tunnels shows the user, never the password', async () => {
    const { agent, api } = await startWithApi(system);
    try {
      const added = await post(api, { name: 'locked', addr: system.origin.port, basicAuth: ['alice:correct-horse'] });
      assert.equal(added.status, 201, JSON.stringify(added.json));
      const host = hostOf(added.json.url);
      const refused = await visit(system.server, host, '/');
      assert.equal(refused.status, 401);
      assert.equal(refused.headers['www-authenticate'], 'Basic realm="svcRouter"');
      const basic = `Basic ${Buffer.from('alice:correct-horse').toString('base64')}`;
      assert.equal((await visit(system.server, host, '/', { headers: { authorization: basic } })).status, 200);
      const listed = await fetch(`${system.server.url}/v1/tunnels`, { headers: { authorization: `Bearer ${system.server.token}` } });
      const text = await listed.text();
      assert.ok(text.includes('"alice"'), text);
      assert.ok(!text.includes('correct-horse'), 'the password is never shown');
    } finally {
      await agent.close();
    }
  });
});
