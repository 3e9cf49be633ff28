import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Messages } from '@svcrouter/protocol';
import { api, startAgent, startOrigin, startServer, visit, type TestOrigin, type TestServer } from './harness/index.js';
import { listTunnels, tunnelByHost } from './harness/lifecycle-support.js';

describe('tunnels and the account through the API', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let token: string;

  before(async () => {
    server = await startServer();
    origin = await startOrigin();
    token = server.token!;
  });
  after(async () => {
    await origin?.close();
    await server?.close();
  });

  it('GET /v1/me returns id, email, name and plan', async () => {
    const result = await api(server, 'GET', '/v1/me', { token });
    assert.equal(result.status, 200);
    const me = result.body as Record<string, unknown>;
    assert.match(String(me.id), /^acc_/);
    assert.equal(me.email, 'local@svcrouter.localhost');
    assert.equal(me.name, 'local');
    assert.equal(me.plan, 'free');
  });

  it('GET /v1/tunnels lists id, status, url and host, online while the agent runs', async () => {
    const agent = await startAgent(server, { token, target: origin.port, subdomain: 'listed' });
    try {
      const tunnel = await tunnelByHost(server, token, 'listed.localhost');
      assert.ok(tunnel, 'listed.localhost is not listed');
      assert.match(tunnel.id, /^tun_/);
      assert.equal(tunnel.status, 'online');
      assert.equal(tunnel.url, agent.url);
      assert.equal(tunnel.host, 'listed.localhost');
    } finally {
      await agent.close();
    }
  });

  it('DELETE /v1/tunnels/:id answers 204; the agent prints a line and exits 0; the name is offline and unlisted', async () => {
    const agent = await startAgent(server, { token, target: origin.port, subdomain: 'deleted' });
    const tunnel = await tunnelByHost(server, token, 'deleted.localhost');
    assert.ok(tunnel);
    const result = await api(server, 'DELETE', `/v1/tunnels/${tunnel.id}`, { token });
    assert.equal(result.status, 204);
    const { code } = await agent.proc.exited;
    assert.equal(code, 0);
    assert.ok(agent.proc.stderrLines.includes('tunnel deleted.localhost was deleted through the API'), agent.proc.output);
    const page = await visit(server, 'deleted.localhost', '/');
    assert.equal(page.status, 404);
    assert.match(page.text, new RegExp(Messages.TUNNEL_OFFLINE));
    assert.equal(
      (await listTunnels(server, token)).some((t) => t.id === tunnel.id),
      false,
    );
  });

  it("DELETE of another account's tunnel answers 404 and the tunnel keeps working", async () => {
    const stranger = await server.createAccount('stranger@example.com');
    const agent = await startAgent(server, { token, target: origin.port, subdomain: 'not-yours' });
    try {
      const tunnel = await tunnelByHost(server, token, 'not-yours.localhost');
      assert.ok(tunnel);
      const result = await api(server, 'DELETE', `/v1/tunnels/${tunnel.id}`, { token: stranger });
      assert.equal(result.status, 404);
      assert.equal((await visit(server, 'not-yours.localhost', '/')).status, 200);
      assert.equal((await tunnelByHost(server, token, 'not-yours.localhost'))?.status, 'online');
    } finally {
      await agent.close();
    }
  });

  it('DELETE of an unknown tunnel id answers 404', async () => {
    const result = await api(server, 'DELETE', '/v1/tunnels/tun_doesnotexist0000', { token });
    assert.equal(result.status, 404);
  });
});

describe('svc-server account commands against a running server', () => {
  let server: TestServer;
  let origin: TestOrigin;

  before(async () => {
    server = await startServer();
    origin = await startOrigin();
  });
  after(async () => {
    await origin?.close();
    await server?.close();
  });

  it('account create --plan pro prints a token that the API and the agent accept', async () => {
    const result = await server.cli(['account', 'create', '--email', 'pro@example.com', '--plan', 'pro']);
    assert.equal(result.code, 0, result.stderr);
    const token = result.stdout.match(/^(svc_[A-Za-z0-9_-]{43})$/m)?.[1];
    assert.ok(token, result.stdout);
    const me = await api(server, 'GET', '/v1/me', { token });
    assert.equal(me.status, 200);
    assert.deepEqual([(me.body as { email: string }).email, (me.body as { plan: string }).plan], ['pro@example.com', 'pro']);
    const agent = await startAgent(server, { token, target: origin.port });
    assert.equal((await agent.close()).code, 0);
  });

  it('account create with an email already taken fails with a clear error and exit 1', async () => {
    await server.createAccount('twice@example.com');
    const result = await server.cli(['account', 'create', '--email', 'Twice@Example.com']);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /an account with email twice@example\.com already exists/i);
  });

  it('account plan --plan pro changes the plan that GET /v1/me shows', async () => {
    const token = await server.createAccount('upgrade@example.com');
    const result = await server.cli(['account', 'plan', '--email', 'upgrade@example.com', '--plan', 'pro']);
    assert.equal(result.code, 0, result.stderr);
    const me = await api(server, 'GET', '/v1/me', { token });
    assert.equal((me.body as { plan: string }).plan, 'pro');
  });
});
