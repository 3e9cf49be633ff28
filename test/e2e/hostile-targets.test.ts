import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { tunnelSuite, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { rawExchange } from './harness/raw-exchange.js';

/** Bounds a hung test (a connection the edge never answers); not a timing assertion. */
const HANG = { timeout: 30_000 };

describe('request targets a visitor chooses', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let agent: TestAgent;
  let host: string;
  /** Another service on the agent's machine, which no visitor may reach through the tunnel. */
  let other: net.Server;
  let otherPort: number;
  let otherConnections = 0;
  const tunnel = tunnelSuite();
  before(async () => {
    ({ server, origin, agent } = tunnel);
    host = `${agent.hostname}:${server.httpPort}`;
    other = net.createServer((socket) => {
      otherConnections++;
      socket.on('error', () => undefined);
      socket.end('HTTP/1.1 200 OK\r\ncontent-length: 6\r\nconnection: close\r\n\r\nSECRET');
    });
    other.listen(0, '127.0.0.1');
    await once(other, 'listening');
    otherPort = (other.address() as net.AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => other.close(() => resolve())));

  const upgrade = (target: string): string => `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: probe\r\n\r\n`;

  it('sends an upgrade with a scheme-relative target to the local service as a path, never to the host it names', HANG, async () => {
    const result = await rawExchange(server.httpPort, upgrade(`//127.0.0.1:${otherPort}/x`));
    // The tunnel's own origin refuses an unknown upgrade protocol with 426: it got the request.
    assert.deepEqual(result.statuses, [426]);
    assert.ok(!result.text.includes('SECRET'));
    assert.equal(otherConnections, 0);
  });

  it("never lets an absolute-form upgrade target name another service on the agent's machine", HANG, async () => {
    const result = await rawExchange(server.httpPort, upgrade(`http://127.0.0.1:${otherPort}/`));
    assert.ok(!result.text.includes('SECRET'));
    assert.equal(otherConnections, 0);
  });

  it('sends an upgrade with an absolute-form target to the local service with its path only', HANG, async () => {
    const result = await rawExchange(server.httpPort, upgrade(`http://${host}/x`));
    assert.deepEqual(result.statuses, [426]);
    assert.ok(!result.text.includes('SECRET'));
    assert.equal(otherConnections, 0);
  });

  it('forwards an absolute-form GET as its path', HANG, async () => {
    const result = await rawExchange(
      server.httpPort,
      `GET http://${host}/echo?abs=1 HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
    );
    assert.deepEqual(result.statuses, [200]);
    assert.equal(origin.seen.at(-1)?.url, '/echo?abs=1');
  });

  for (const target of ['*', 'echo', `127.0.0.1:${0}`, 'ftp://x/echo']) {
    it(`answers 400 to the request target ${JSON.stringify(target)}, which is neither a path nor an absolute http URL`, HANG, async () => {
      const before = origin.seen.length;
      const result = await rawExchange(server.httpPort, `OPTIONS ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      assert.deepEqual(result.statuses, [400]);
      assert.equal(origin.seen.length, before);
    });
  }

  it('answers 400 to an upgrade whose target is not a path or an absolute http URL', HANG, async () => {
    const result = await rawExchange(server.httpPort, upgrade('*'));
    assert.deepEqual(result.statuses, [400]);
    assert.equal(otherConnections, 0);
  });
});
