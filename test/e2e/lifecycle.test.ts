import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Messages } from '@svcrouter/protocol';
import { spawnAgent, startAgent, startOrigin, startServer, visit, type TestOrigin, type TestServer } from './harness/index.js';
import { startHoldingOrigin, tunnelByHost, unusedPort, type HoldingOrigin } from './harness/lifecycle-support.js';

const OFFLINE = new RegExp(Messages.TUNNEL_OFFLINE);

describe('ending an agent', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let holding: HoldingOrigin;

  before(async () => {
    server = await startServer();
    origin = await startOrigin();
    holding = await startHoldingOrigin();
  });
  after(async () => {
    await holding?.close();
    await origin?.close();
    await server?.close();
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} exits 0 and the hostname is offline as soon as the agent has exited`, async () => {
      const agent = await startAgent(server, { token: server.token, target: origin.port });
      assert.equal((await visit(server, agent.hostname, '/')).status, 200);
      assert.deepEqual(await agent.proc.kill(signal), { code: 0, signal: null });
      const page = await visit(server, agent.hostname, '/');
      assert.equal(page.status, 404);
      assert.match(page.text, OFFLINE);
    });
  }

  it('SIGINT leaves a pinned tunnel listed as offline, not online', async () => {
    const agent = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'stopped-pinned' });
    assert.equal((await tunnelByHost(server, server.token!, agent.hostname))?.status, 'online');
    assert.equal((await agent.close()).code, 0);
    assert.equal((await tunnelByHost(server, server.token!, agent.hostname))?.status, 'offline');
  });

  it('SIGKILL answers the in-flight request with 502, then the hostname is offline', async () => {
    const agent = await startAgent(server, { token: server.token, target: holding.port });
    const held = holding.nextHold();
    const inFlight = visit(server, agent.hostname, '/hold');
    await held;
    await agent.proc.kill('SIGKILL');
    assert.equal((await inFlight).status, 502);
    const page = await visit(server, agent.hostname, '/');
    assert.equal(page.status, 404);
    assert.match(page.text, OFFLINE);
  });

  it('answers 502 naming localhost:<port> when nothing listens on the local port', async () => {
    const port = await unusedPort();
    const agent = await startAgent(server, { token: server.token, target: port });
    try {
      const result = await visit(server, agent.hostname, '/');
      assert.equal(result.status, 502);
      assert.match(result.text, new RegExp(`could not reach localhost:${port}`));
    } finally {
      await agent.close();
    }
  });
});

describe('stopping an agent that is still connecting', () => {
  it('SIGTERM while the edge has not answered the dial exits 0 at once', async () => {
    // A stand-in edge that accepts the session upgrade and never answers it.
    let dialled!: () => void;
    const reached = new Promise<void>((resolve) => (dialled = resolve));
    const held: Duplex[] = [];
    const edge = http.createServer();
    edge.on('upgrade', (_req, socket: Duplex) => {
      held.push(socket);
      dialled();
    });
    await new Promise<void>((resolve) => edge.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(edge.address() as AddressInfo).port}`;
      const proc = spawnAgent({ url }, { token: `svc_${'A'.repeat(43)}`, target: 3000 });
      await reached;
      assert.deepEqual(await proc.kill('SIGTERM'), { code: 0, signal: null });
      assert.equal(proc.output, '');
    } finally {
      // Upgraded sockets are the test's own: the server's close waits for them.
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => edge.close(() => resolve()));
    }
  });
});

describe('a frozen agent', () => {
  let server: TestServer;
  let origin: TestOrigin;

  before(async () => {
    server = await startServer({ env: { SVC_HEARTBEAT_MS: '200' } });
    origin = await startOrigin();
  });
  after(async () => {
    await origin?.close();
    await server?.close();
  });

  it('is declared dead by the edge heartbeat (offline page), and comes back under its name when it resumes', async () => {
    const agent = await startAgent(server, { token: server.token, target: origin.port });
    const pid = agent.proc.child.pid!;
    process.kill(pid, 'SIGSTOP');
    try {
      // The edge logs the end of the session after it has released the tunnel.
      await server.proc.waitForLine(/no heartbeat from peer.*agent session closed/);
      const page = await visit(server, agent.hostname, '/');
      assert.equal(page.status, 404);
      assert.match(page.text, OFFLINE);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await agent.proc.waitForLine(/^Reconnected: forwarding /);
    assert.ok(agent.proc.lines.includes(`Reconnected: forwarding ${agent.url} -> http://localhost:${origin.port}`), agent.proc.output);
    assert.equal((await visit(server, agent.hostname, '/')).status, 200);
    assert.equal((await agent.close()).code, 0);
  });
});
