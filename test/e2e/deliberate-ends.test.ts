import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Messages } from '@svcrouter/protocol';
import { api, startAgent, startOrigin, startServer, visit, type TestOrigin, type TestServer } from './harness/index.js';

// A session the edge ends on purpose (its token revoked, its tunnel deleted, the edge stopping)
// cannot come back: its names are free at once, and visitors get the offline page at once,
// never held for a reconnect. Only a lost connection keeps the grace period and the hold
// (hold.test.ts, name-grace.test.ts).

const HANG = { timeout: 60_000 };

/** Whether the edge has logged holding a request for `subdomain` (see Edge.hold). */
function heldAny(server: TestServer, subdomain: string): boolean {
  const held = new RegExp(`${subdomain}\\.localhost.*request held for a reconnect`);
  return [...server.proc.lines, ...server.proc.stderrLines].some((line) => held.test(line));
}

describe('a session the edge ends on purpose releases its names at once', () => {
  let origin: TestOrigin;
  let server: TestServer;
  let otherToken: string;
  before(async () => {
    origin = await startOrigin();
    // Holds far longer than the test's bound: a held request would fail it rather than pass late.
    server = await startServer({ env: { SVC_HOLD_MS: '120000', SVC_NAME_GRACE_MS: '120000' } });
    otherToken = await server.createAccount('other@example.com');
  });
  after(async () => {
    await server?.close();
    await origin?.close();
  });

  /** Binds `subdomain` with another account's agent: possible only once the name is free. */
  async function takenByAnother(subdomain: string): Promise<void> {
    const taker = await startAgent(server, { token: otherToken, target: origin.port, subdomain });
    assert.equal((await visit(server, `${subdomain}.localhost`, '/')).text, 'hello from origin');
    assert.equal((await taker.close()).code, 0);
  }

  it('when its token is revoked: visitors get the offline page at once, and the name is free', HANG, async () => {
    const key = (await api(server, 'POST', '/v1/keys', { token: server.token }, { description: 'revoked' })).body as {
      id: string;
      token: string;
    };
    const agent = await startAgent(server, { token: key.token, target: origin.port, subdomain: 'revoked' });
    const unbound = server.proc.waitForLine(/revoked\.localhost.*"reason":"ended".*tunnel unbound/);
    assert.equal((await api(server, 'DELETE', `/v1/keys/${key.id}`, { token: server.token })).status, 204);
    await unbound;
    const page = await visit(server, 'revoked.localhost', '/');
    assert.equal(page.status, 404);
    assert.match(page.text, new RegExp(Messages.TUNNEL_OFFLINE));
    assert.ok(!heldAny(server, 'revoked'), 'a visitor was held for an agent whose token is revoked');
    await agent.proc.exited;
    await takenByAnother('revoked');
  });

  it('when its tunnel is deleted while its agent is away: the held visitors get the offline page at once', HANG, async () => {
    const agent = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'deleted' });
    const lost = server.proc.waitForLine(/deleted\.localhost.*"clean":false.*tunnel unbound/);
    await agent.proc.kill('SIGKILL');
    await lost;
    const held = server.proc.waitForLine(/deleted\.localhost.*request held for a reconnect/);
    const waiting = visit(server, 'deleted.localhost', '/');
    await held;
    const tunnels = (await api(server, 'GET', '/v1/tunnels', { token: server.token })).body as {
      tunnels: Array<{ id: string; host: string }>;
    };
    const tunnel = tunnels.tunnels.find((t) => t.host.startsWith('deleted.'));
    assert.ok(tunnel, 'the lost tunnel is listed');
    assert.equal((await api(server, 'DELETE', `/v1/tunnels/${tunnel.id}`, { token: server.token })).status, 204);
    assert.equal((await waiting).status, 404);
    await takenByAnother('deleted');
  });

  it(
    'when its token is revoked while its agent is away: the held visitors get the offline page at once, and the name is free',
    HANG,
    async () => {
      const key = (await api(server, 'POST', '/v1/keys', { token: server.token }, { description: 'away' })).body as {
        id: string;
        token: string;
      };
      const agent = await startAgent(server, { token: key.token, target: origin.port, subdomain: 'away' });
      const lost = server.proc.waitForLine(/away\.localhost.*"clean":false.*tunnel unbound/);
      await agent.proc.kill('SIGKILL');
      await lost;
      const held = server.proc.waitForLine(/away\.localhost.*request held for a reconnect/);
      const waiting = visit(server, 'away.localhost', '/');
      await held;
      assert.equal((await api(server, 'DELETE', `/v1/keys/${key.id}`, { token: server.token })).status, 204);
      const page = await waiting;
      assert.equal(page.status, 404);
      assert.match(page.text, new RegExp(Messages.TUNNEL_OFFLINE));
      await takenByAnother('away');
    },
  );

  it('when the edge stops: the tunnels leave as ended on purpose, not lost', HANG, async () => {
    const stopping = await startServer({ env: { SVC_DRAIN_MS: '0' } });
    const agent = await startAgent(stopping, { token: stopping.token, target: origin.port, subdomain: 'stopping' });
    try {
      const unbound = stopping.proc.waitForLine(/stopping\.localhost.*"reason":"ended".*tunnel unbound/);
      await stopping.close();
      await unbound;
    } finally {
      await agent.close();
    }
  });
});
