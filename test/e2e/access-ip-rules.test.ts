import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BindMessages } from '@svcrouter/protocol';
import { runAgent, startAgent, startOrigin, startServer, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { visitFrom } from './harness/access-support.js';

// IP rules at the edge with real source addresses: the loopback range lets a client bind
// 127.0.0.2…, and the server listens dual-stack so `::1` is a visitor too.
describe('IP rules in front of a tunnel', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let agent: TestAgent;
  let envAgent: TestAgent;

  before(async () => {
    server = await startServer({ env: { SVC_BIND_HOST: '::' } });
    origin = await startOrigin();
    agent = await startAgent(server, {
      token: server.token,
      target: origin.port,
      subdomain: 'guarded',
      args: ['--cidr-allow', '127.0.0.0/30', '--cidr-allow', '::1', '--cidr-deny', '127.0.0.2'],
    });
    envAgent = await startAgent(server, { token: server.token, target: origin.port, env: { SVC_CIDR_DENY: '::1,192.0.2.0/24' } });
  });
  after(async () => {
    await envAgent?.close();
    await agent?.close();
    await origin?.close();
    await server?.close();
  });

  it('lets an allowed address through and answers 403 "Access denied" to the others; deny wins over allow', async () => {
    assert.equal((await visitFrom(server, agent.hostname, '/echo', { from: '127.0.0.1' })).status, 200);
    const denied = await visitFrom(server, agent.hostname, '/echo', { from: '127.0.0.2' });
    assert.equal(denied.status, 403);
    assert.match(denied.text, /Access denied/);
    assert.equal((await visitFrom(server, agent.hostname, '/echo', { from: '127.0.0.5' })).status, 403);
  });

  it('matches IPv6 visitors', async () => {
    assert.equal((await visitFrom(server, agent.hostname, '/echo', { from: '::1', connectTo: '::1' })).status, 200);
    assert.equal((await visitFrom(server, envAgent.hostname, '/echo', { from: '::1', connectTo: '::1' })).status, 403);
    assert.equal((await visitFrom(server, envAgent.hostname, '/echo', { from: '127.0.0.7' })).status, 200);
  });

  it('matches the socket address, never X-Forwarded-For', async () => {
    const spoofed = await visitFrom(server, agent.hostname, '/echo', { from: '127.0.0.5', headers: { 'x-forwarded-for': '127.0.0.1' } });
    assert.equal(spoofed.status, 403);
  });

  it('refuses a bind without rules that would take over the protected name, and keeps the rules in force', async () => {
    const result = await runAgent(['http', String(origin.port)], {
      SVC_SERVER: server.url,
      SVC_TOKEN: server.token,
      SVC_SUBDOMAIN: 'guarded',
    });
    assert.equal(result.code, 1);
    assert.ok(result.stderr.includes(BindMessages.policyRequired(agent.hostname)), result.stderr);
    assert.equal((await visitFrom(server, agent.hostname, '/echo', { from: '127.0.0.5' })).status, 403);
  });
});
