import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { startAgent, startOrigin, startServer, api, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { eventually } from './harness/api-helpers.js';
import { basic, visitFrom, visitH2 } from './harness/access-support.js';

const execFileAsync = promisify(execFile);
const PASSWORD = 'correct-horse-9';
const ENV_PASSWORD = 'battery-staple-7';

// Basic auth at the edge, end to end: a real server, a real agent started with --basic-auth (and
// another with SVC_BASIC_AUTH), real visitors over HTTP/1.1 (Node and curl) and HTTP/2.
describe('basic auth in front of a tunnel', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let agent: TestAgent;
  let envAgent: TestAgent;

  before(async () => {
    server = await startServer();
    origin = await startOrigin();
    agent = await startAgent(server, {
      token: server.token,
      target: origin.port,
      args: ['--basic-auth', `alice:${PASSWORD}`, '--basic-auth', 'bob:another-password'],
    });
    envAgent = await startAgent(server, { token: server.token, target: origin.port, env: { SVC_BASIC_AUTH: `carol:${ENV_PASSWORD}` } });
  });
  after(async () => {
    await envAgent?.close();
    await agent?.close();
    await origin?.close();
    await server?.close();
  });

  it('asks a visitor without credentials to sign in: 401 with WWW-Authenticate and a short page', async () => {
    const answer = await visitFrom(server, agent.hostname, '/echo');
    assert.equal(answer.status, 401);
    assert.equal(answer.headers['www-authenticate'], 'Basic realm="svcRouter"');
    assert.match(answer.text, /Authentication required/);
  });

  it('forwards a signed-in request without the Authorization header the edge consumed', async () => {
    const answer = await visitFrom(server, agent.hostname, '/echo', { headers: { authorization: basic('alice', PASSWORD) } });
    assert.equal(answer.status, 200);
    const echo = JSON.parse(answer.text) as { headers: Record<string, string> };
    assert.equal(echo.headers.authorization, undefined);
    const second = await visitFrom(server, agent.hostname, '/echo', { headers: { authorization: basic('bob', 'another-password') } });
    assert.equal(second.status, 200);
  });

  it('takes the pairs from SVC_BASIC_AUTH', async () => {
    assert.equal((await visitFrom(server, envAgent.hostname, '/echo')).status, 401);
    const answer = await visitFrom(server, envAgent.hostname, '/echo', { headers: { authorization: basic('carol', ENV_PASSWORD) } });
    assert.equal(answer.status, 200);
  });

  it('signs in over HTTP/2 too', async () => {
    assert.equal((await visitH2(server, agent.hostname, '/echo')).status, 401);
    const answer = await visitH2(server, agent.hostname, '/echo', { authorization: basic('alice', PASSWORD) });
    assert.equal(answer.status, 200);
    assert.equal((JSON.parse(answer.text) as { headers: Record<string, string> }).headers.authorization, undefined);
  });

  it('signs in with curl -u', async () => {
    const { stdout } = await execFileAsync('curl', [
      '-s',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '-u',
      `alice:${PASSWORD}`,
      '--resolve',
      `${agent.hostname}:${server.httpPort}:127.0.0.1`,
      `http://${agent.hostname}:${server.httpPort}/echo`,
    ]);
    assert.equal(stdout, '200');
  });

  it('refuses hostile headers with 401: wrong password, 10 KiB, no colon, bad base64, a look-alike user', async () => {
    const from = '127.0.0.9';
    const hostile = [
      basic('alice', 'wrong-password'),
      `Basic ${'A'.repeat(10 * 1024)}`,
      `Basic ${Buffer.from(`alice${PASSWORD}`).toString('base64')}`,
      'Basic !!not*base64!!',
      // Cyrillic "а" in place of the Latin "a".
      basic('\u0430lice', PASSWORD),
      `Bearer ${PASSWORD}`,
    ];
    for (const authorization of hostile) {
      const answer = await visitFrom(server, agent.hostname, '/echo', { from, headers: { authorization } });
      assert.equal(answer.status, 401, authorization.slice(0, 40));
    }
  });

  it('answers 429 for a minute to an address that failed 10 times, even with the right password; others pass', async () => {
    const from = '127.0.0.3';
    for (let i = 0; i < 10; i++) {
      const answer = await visitFrom(server, agent.hostname, '/echo', {
        from,
        headers: { authorization: basic('alice', `wrong-${i}-password`) },
      });
      assert.equal(answer.status, 401);
    }
    const limited = await visitFrom(server, agent.hostname, '/echo', { from, headers: { authorization: basic('alice', PASSWORD) } });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers['retry-after'], '60');
    const other = await visitFrom(server, agent.hostname, '/echo', {
      from: '127.0.0.4',
      headers: { authorization: basic('alice', PASSWORD) },
    });
    assert.equal(other.status, 200);
  });

  it('records every 401 and 429 in the Traffic Inspector, with the visitor address', async () => {
    const page = await eventually(
      () => api(server, 'GET', '/v1/requests?limit=1000', { token: server.token }),
      (r) => {
        const records = (r.body as { requests: Array<{ status: number; host: string }> }).requests;
        return records.some((x) => x.status === 429) && records.filter((x) => x.status === 401 && x.host === agent.hostname).length >= 10;
      },
      'denials captured',
    );
    const records = (page.body as { requests: Array<{ status: number; ip: string; host: string }> }).requests;
    assert.ok(records.some((x) => x.status === 429 && x.ip === '127.0.0.3'));
  });

  it('never writes a password or a credential header to the server log or the agent output', () => {
    const everything = [...server.proc.lines, ...server.proc.stderrLines, ...agent.proc.lines, ...agent.proc.stderrLines].join('\n');
    assert.ok(!everything.includes(PASSWORD));
    assert.ok(!everything.includes(basic('alice', PASSWORD).slice(6)));
  });

  it('shows the rules without secrets in GET /v1/tunnels', async () => {
    const list = (await api(server, 'GET', '/v1/tunnels', { token: server.token })).body as {
      tunnels: Array<{ host: string; access?: { basicAuth: string[]; cidrAllow: string[]; cidrDeny: string[] } }>;
    };
    const tunnel = list.tunnels.find((t) => t.host === agent.hostname)!;
    assert.deepEqual(tunnel.access?.basicAuth, ['alice', 'bob']);
    assert.ok(!JSON.stringify(list).includes('scrypt'));
  });
});
