import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forward, Messages } from '@svcrouter/sdk';
import { runAgent, splitFailure, startServer, type TestServer } from './harness/index.js';
import { connectTcp, portOf, readAll, startTcpService, tcpPortRange, type TcpService } from './harness/tcp-support.js';

// `svc tcp` binds that fail leave their port free: a port the edge does not serve is refused
// before anything is written for it, and a bind refused at the tunnel limit gives up the port it
// claimed. The range is one port, so another account binding it proves it is free.

describe('tcp binds that fail', () => {
  let server: TestServer;
  let echo: TcpService;
  let port: number;
  let otherToken: string;
  before(async () => {
    const range = await tcpPortRange(1);
    port = Number(range.split('-')[0]);
    server = await startServer({ env: { SVC_TCP_PORTS: range, SVC_PLANS: JSON.stringify({ free: { tunnels: 1 } }) } });
    echo = await startTcpService();
    otherToken = await server.createAccount('other@example.com');
  });
  after(async () => {
    await echo?.close();
    await server?.close();
  });

  /** Runs `svc tcp <echo> <args>` as the server's account; it must fail with exit 1. */
  async function failing(args: string[]): Promise<{ sentence: string; hint: string }> {
    const result = await runAgent(['tcp', String(echo.port), ...args], { SVC_SERVER: server.url, SVC_TOKEN: server.token! });
    assert.equal(result.code, 1, result.stderr);
    return splitFailure(result.stderr);
  }

  /** Another account binds the range's one port and carries bytes on it. */
  async function otherAccountBinds(): Promise<void> {
    const tunnel = await forward({ proto: 'tcp', addr: echo.port, token: otherToken, serverUrl: server.url });
    try {
      assert.equal(portOf(tunnel.url), port);
      const socket = await connectTcp(port);
      const got = readAll(socket);
      socket.end('free');
      assert.equal((await got).toString(), 'free');
    } finally {
      await tunnel.close();
    }
  }

  it('at the tunnel limit: refused, and the port stays free for another account', async () => {
    const http = await forward({ addr: echo.port, token: server.token!, serverUrl: server.url });
    try {
      const failure = await failing(['--remote-addr', `localhost:${port}`]);
      assert.equal(failure.sentence, Messages.TUNNEL_LIMIT);
    } finally {
      await http.close();
    }
    await otherAccountBinds();
  });

  it('a port outside the range: says which ports the edge serves, and takes nothing', async () => {
    const failure = await failing(['--remote-addr', 'localhost:22']);
    assert.equal(failure.sentence, `port 22 is outside this edge's TCP ports ${port}`);
    await otherAccountBinds();
  });
});
