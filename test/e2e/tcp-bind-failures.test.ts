import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiClient, BindMessages, forward, Messages } from '@svcrouter/sdk';
import { runAgent, splitFailure, startServer, type TestServer } from './harness/index.js';
import { connectTcp, portOf, readAll, startTcpService, tcpPortRange, type TcpService } from './harness/tcp-support.js';

// `svc tcp` binds that fail leave their port as it was: a port the edge does not serve, or one
// the account has not reserved, is refused before anything is written for it, and a bind refused
// at the tunnel limit gives up the lease it claimed but keeps a reservation. The range is one
// port, so another account binding it proves it is free.

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

  it('at the tunnel limit, on a port the account has not reserved: refused, and the port stays free', async () => {
    const http = await forward({ addr: echo.port, token: server.token!, serverUrl: server.url });
    try {
      const failure = await failing(['--remote-addr', `localhost:${port}`]);
      assert.equal(failure.sentence, BindMessages.tcpAddressNotYours(`localhost:${port}`));
      assert.match(failure.hint, /^GET \/v1\/tcp-addresses lists/);
    } finally {
      await http.close();
    }
    await otherAccountBinds();
  });

  it('at the tunnel limit, on its reservation: refused, and the reservation stays its own', async () => {
    const client = new ApiClient({ baseUrl: server.url, token: server.token! });
    const reserved = await client.tcpAddresses.reserve();
    try {
      const http = await forward({ addr: echo.port, token: server.token!, serverUrl: server.url });
      try {
        assert.equal((await failing(['--remote-addr', reserved.addr])).sentence, Messages.TUNNEL_LIMIT);
      } finally {
        await http.close();
      }
      assert.deepEqual(
        (await client.tcpAddresses.list()).map((a) => a.addr),
        [reserved.addr],
      );
      const tunnel = await forward({
        proto: 'tcp',
        addr: echo.port,
        token: server.token!,
        serverUrl: server.url,
        remoteAddr: String(port),
      });
      assert.equal(tunnel.url, reserved.url);
      await tunnel.close();
    } finally {
      await client.tcpAddresses.delete(reserved.id);
    }
    await otherAccountBinds();
  });

  it('an address on another host: says which host the edge answers for, and takes nothing', async () => {
    const addr = `evil.example:${port}`;
    assert.equal((await failing(['--remote-addr', addr])).sentence, BindMessages.tcpAddressOtherHost(addr, 'localhost'));
    await otherAccountBinds();
  });

  it('a port outside the range: says which ports the edge serves, and takes nothing', async () => {
    const failure = await failing(['--remote-addr', 'localhost:22']);
    assert.equal(failure.sentence, `port 22 is outside this edge's TCP ports ${port}`);
    await otherAccountBinds();
  });
});
