import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import { before, describe, it } from 'node:test';
import WebSocket from 'ws';
import {
  edgeUrl,
  loopbackLookup,
  patternChunk,
  tunnelSuite,
  visit,
  type TestAgent,
  type TestOrigin,
  type TestServer,
} from './harness/index.js';
import { MiB, openStreams } from './harness/data-path-support.js';

/** Bounds a hung test (a close that never propagates hangs); not a timing assertion. */
const HANG = { timeout: 60_000 };

describe('WebSockets through the tunnel', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let agent: TestAgent;
  const tunnel = tunnelSuite();
  before(() => {
    ({ server, origin, agent } = tunnel);
  });

  /** Opens a visitor WebSocket to the origin's `/ws` echo and the origin's end of the same connection. */
  async function connect(secure: boolean): Promise<{ visitor: WebSocket; originSide: WebSocket }> {
    const url = edgeUrl(server, agent.hostname, '/ws', secure).replace(/^http/, 'ws');
    const accepted = once(origin.activity, 'websocket') as Promise<[WebSocket]>;
    const visitor = new WebSocket(url, { lookup: loopbackLookup, ca: secure ? server.caPem : undefined });
    await once(visitor, 'open');
    const [originSide] = await accepted;
    return { visitor, originSide };
  }

  /** Sends one message and resolves with the echo. */
  async function echo(ws: WebSocket, data: string | Buffer): Promise<{ data: Buffer; isBinary: boolean }> {
    const reply = once(ws, 'message') as Promise<[Buffer, boolean]>;
    ws.send(data);
    const [message, isBinary] = await reply;
    return { data: message, isBinary };
  }

  for (const secure of [false, true]) {
    const scheme = secure ? 'wss' : 'ws';
    it(`echoes text and binary frames, keeping their type, over ${scheme}://`, HANG, async () => {
      const { visitor } = await connect(secure);
      const text = await echo(visitor, 'hello through the tunnel');
      assert.equal(text.isBinary, false);
      assert.equal(text.data.toString('utf8'), 'hello through the tunnel');
      const bytes = Buffer.from([0, 1, 2, 253, 254, 255]);
      const binary = await echo(visitor, bytes);
      assert.equal(binary.isBinary, true);
      assert.deepEqual(binary.data, bytes);
      visitor.close();
      await once(visitor, 'close');
    });

    it(`delivers 100 messages in order over ${scheme}://`, HANG, async () => {
      const { visitor } = await connect(secure);
      const received: string[] = [];
      const all = new Promise<void>((resolve) => {
        visitor.on('message', (data: Buffer) => {
          received.push(data.toString('utf8'));
          if (received.length === 100) resolve();
        });
      });
      for (let index = 0; index < 100; index++) visitor.send(`message ${index}`);
      await all;
      assert.deepEqual(
        received,
        Array.from({ length: 100 }, (_, index) => `message ${index}`),
      );
      visitor.close();
      await once(visitor, 'close');
    });
  }

  it('carries a 5 MiB message intact', HANG, async () => {
    const { visitor } = await connect(false);
    const big = Buffer.concat(Array.from({ length: (5 * MiB) / 65536 }, (_, index) => patternChunk(index)));
    const reply = await echo(visitor, big);
    assert.equal(reply.isBinary, true);
    assert.equal(reply.data.length, big.length);
    assert.ok(reply.data.equals(big));
    visitor.close();
    await once(visitor, 'close');
  });

  it('closes the origin side with the code and reason when the visitor closes', HANG, async () => {
    const { visitor, originSide } = await connect(false);
    // Both ends may report the close in either order: listen to both before closing.
    const originClosed = once(originSide, 'close') as Promise<[number, Buffer]>;
    const visitorClosed = once(visitor, 'close');
    visitor.close(4000, 'visitor done');
    const [code, reason] = await originClosed;
    assert.equal(code, 4000);
    assert.equal(reason.toString(), 'visitor done');
    await visitorClosed;
  });

  it('closes the visitor side with the code and reason when the origin closes', HANG, async () => {
    const { visitor, originSide } = await connect(true);
    const visitorClosed = once(visitor, 'close') as Promise<[number, Buffer]>;
    originSide.close(4001, 'origin done');
    const [code, reason] = await visitorClosed;
    assert.equal(code, 4001);
    assert.equal(reason.toString(), 'origin done');
  });

  it('drops the visitor connection when the origin connection is cut', HANG, async () => {
    const { visitor, originSide } = await connect(false);
    const visitorClosed = once(visitor, 'close') as Promise<[number]>;
    originSide.terminate();
    const [code] = await visitorClosed;
    assert.equal(code, 1006);
  });

  it('drops the origin connection when the visitor connection is cut', HANG, async () => {
    const { visitor, originSide } = await connect(true);
    const originClosed = once(originSide, 'close') as Promise<[number]>;
    visitor.terminate();
    const [code] = await originClosed;
    assert.equal(code, 1006);
  });

  it("passes a non-WebSocket Upgrade through and returns the origin's 426", HANG, async () => {
    const req = http.request(edgeUrl(server, agent.hostname, '/anything'), {
      headers: { connection: 'upgrade', upgrade: 'foo' },
      lookup: loopbackLookup,
      agent: false,
    });
    req.on('upgrade', () => assert.fail('the edge switched protocols for an upgrade the origin refused'));
    req.end();
    const [res] = (await once(req, 'response')) as [http.IncomingMessage];
    assert.equal(res.statusCode, 426);
    res.resume();
    await once(res, 'end');
  });

  // Runs last: every connection above has closed, one way or another.
  it('leaves no stream open on the edge once the WebSockets above have closed', HANG, async () => {
    // A round trip through the tunnel lets the closes above finish crossing the session.
    assert.equal((await visit(server, agent.hostname, '/echo')).status, 200);
    assert.equal(await openStreams(server), 0);
  });
});
