import assert from 'node:assert/strict';
import { once } from 'node:events';
import net, { type Server } from 'node:net';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { pino } from 'pino';
import { freePort } from '@svcrouter/testkit';
import { RemotePorts } from './tcp-remote-ports.js';

// RemotePorts against real listening sockets on loopback: the node's side (listen, release) is
// a map of real servers, as TcpTunnels keeps them.

const DOMAIN = 'example.test';

/** Real listeners by port, and the log lines RemotePorts wrote. */
function harness(range: { from: number; to: number }) {
  const servers = new Map<number, Server>();
  const lines: Array<{ msg: string; port?: number }> = [];
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as { msg: string; port?: number });
        done();
      },
    }),
  );
  const pending: Array<Promise<boolean>> = [];
  const listen = (port: number): Promise<boolean> => {
    const opening = new Promise<boolean>((resolve) => {
      if (servers.has(port)) return resolve(true);
      const server = net.createServer((socket) => socket.destroy());
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => {
        servers.set(port, server);
        resolve(true);
      });
    });
    pending.push(opening);
    return opening;
  };
  const release = (port: number): void => {
    servers.get(port)?.close();
    servers.delete(port);
  };
  const ports = new RemotePorts({ range, sharedDomain: DOMAIN, log, listen, release });
  // RemotePorts' own handler of a listen was attached first, so it has run once these settle.
  const settled = () => Promise.all(pending);
  return { ports, servers, lines, settled, close: () => [...servers.keys()].forEach(release) };
}

describe('RemotePorts', () => {
  const cleanups: Array<() => void> = [];
  after(() => cleanups.forEach((cleanup) => cleanup()));

  it('listens on the TCP tunnels’ ports among the hostnames, in range only, and lets go of those gone', async () => {
    const port = await freePort();
    const h = harness({ from: port, to: port });
    cleanups.push(h.close);
    h.ports.follow([`${DOMAIN}:${port}`, 'app.example.test', `${DOMAIN}:${port === 65535 ? 1 : port + 1}`]);
    await h.settled();
    assert.deepEqual([...h.servers.keys()], [port]);
    assert.ok(h.ports.has(port));
    assert.ok(h.lines.some((line) => line.msg.includes('outside SVC_TCP_PORTS')));
    h.ports.follow([]);
    assert.equal(h.ports.has(port), false);
    assert.equal(h.servers.size, 0);
  });

  it('logs a port another program holds once, tries it again at each follow, and listens once it is free', async () => {
    const port = await freePort();
    const other = net.createServer().listen(port, '127.0.0.1');
    await once(other, 'listening');
    const h = harness({ from: port, to: port });
    cleanups.push(h.close);
    h.ports.follow([`${DOMAIN}:${port}`]);
    await h.settled();
    h.ports.follow([`${DOMAIN}:${port}`]);
    await h.settled();
    const refused = h.lines.filter((line) => line.msg.startsWith('cannot listen') && line.port === port);
    assert.equal(refused.length, 1);
    assert.equal(h.servers.size, 0);
    await new Promise((resolve) => other.close(resolve));
    h.ports.follow([`${DOMAIN}:${port}`]);
    await h.settled();
    assert.deepEqual([...h.servers.keys()], [port]);
    assert.ok(h.lines.some((line) => line.msg.startsWith('listening on the port') && line.port === port));
  });

  it('releases a port whose tunnel went offline while its listener was opening', async () => {
    const port = await freePort();
    const h = harness({ from: port, to: port });
    cleanups.push(h.close);
    h.ports.follow([`${DOMAIN}:${port}`]);
    // Gone before the listen settled: the listener that opens after is closed again.
    h.ports.follow([]);
    await h.settled();
    assert.equal(h.servers.size, 0);
  });
});
