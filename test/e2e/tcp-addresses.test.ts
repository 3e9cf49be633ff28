import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { ApiClient, forward, type TunnelInfo } from '@svcrouter/sdk';
import { api, startServer, type TestServer } from './harness/index.js';
import { connectTcp, portOf, readAll, startTcpService, tcpPortRange } from './harness/tcp-support.js';

// Reserved TCP addresses: POST/GET/DELETE /v1/tcp-addresses within the plan's tcpAddresses limit,
// bound with --remote-addr by their account only; GET /v1/tunnels reports a TCP tunnel's proto
// and tcp:// address.

describe('reserved TCP addresses', () => {
  let server: TestServer;
  let echo: Awaited<ReturnType<typeof startTcpService>>;
  before(async () => {
    server = await startServer({ env: { SVC_TCP_PORTS: await tcpPortRange(100) } });
    echo = await startTcpService();
  });
  after(async () => {
    await echo?.close();
    await server?.close();
  });

  it('reserves one address on the free plan, binds it with remoteAddr, and refuses it to another account', async () => {
    const client = new ApiClient({ baseUrl: server.url, token: server.token! });
    const reserved = await client.tcpAddresses.reserve();
    assert.match(reserved.addr, /^localhost:\d+$/);
    assert.equal(reserved.url, `tcp://${reserved.addr}`);
    assert.deepEqual(
      (await client.tcpAddresses.list()).map((a) => a.id),
      [reserved.id],
    );
    const second = await api(server, 'POST', '/v1/tcp-addresses', { token: server.token! }, {});
    assert.equal(second.status, 403);
    assert.equal((second.body as { error: string }).error, 'tcp_address_limit');

    const otherToken = await server.createAccount('other@example.com');
    await assert.rejects(forward({ proto: 'tcp', addr: echo.port, token: otherToken, serverUrl: server.url, remoteAddr: reserved.addr }), {
      message: `${reserved.addr} is not a TCP address reserved by this account; reserve one with POST /v1/tcp-addresses`,
    });

    const tunnel = await forward({ proto: 'tcp', addr: echo.port, token: server.token!, serverUrl: server.url, remoteAddr: reserved.addr });
    try {
      assert.equal(tunnel.url, reserved.url);
      const socket = await connectTcp(portOf(tunnel.url));
      const got = readAll(socket);
      socket.end('reserved');
      assert.equal((await got).toString(), 'reserved');

      const listed = (await api(server, 'GET', '/v1/tunnels', { token: server.token! })).body as { tunnels: TunnelInfo[] };
      const row = listed.tunnels.find((t) => t.id === tunnel.id)!;
      assert.equal(row.proto, 'tcp');
      assert.equal(row.url, reserved.url);
      assert.equal(row.status, 'online');

      // Deleting the reservation closes the tunnel bound on it.
      const ended = once(tunnel, 'end');
      await client.tcpAddresses.delete(reserved.id);
      await ended;
      assert.deepEqual(await client.tcpAddresses.list(), []);
    } finally {
      await tunnel.close();
    }
  });
});
