import assert from 'node:assert/strict';
import type http from 'node:http';
import { describe, it } from 'node:test';
import { ResetCode, streamDuplex, type RequestHead } from '@svcrouter/protocol';
import { collectAnswer, httpOrigin, originSetup, tcpOrigin, visit, type TestOrigin } from './origin-test-support.js';

// The agent connects to its local target and nowhere else, whatever request target a visitor
// (or a faulty edge) sends: the target only ever supplies the path.

describe('OriginProxy request targets', () => {
  const setup = originSetup();

  /** An origin that answers every upgrade with 101 and remembers the request targets it saw. */
  async function upgradeOrigin(): Promise<TestOrigin & { targets: string[] }> {
    const targets: string[] = [];
    const origin = await httpOrigin((req, res) => {
      targets.push(req.url ?? '');
      res.end('plain');
    });
    origin.server.on('upgrade', (req: http.IncomingMessage, socket) => {
      targets.push(req.url ?? '');
      socket.end('HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: probe\r\n\r\n');
    });
    return Object.assign(origin, { targets });
  }

  /** Another service on the agent's machine; counts connections and would answer a secret. */
  async function otherService(): Promise<TestOrigin> {
    return tcpOrigin((socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 6\r\nconnection: close\r\n\r\nSECRET'));
  }

  function upgradeHead(path: string): RequestHead {
    return { m: 'GET', p: path, h: ['Host', 'origin.test', 'Connection', 'Upgrade', 'Upgrade', 'probe'], t: 'tun_test', u: 1 };
  }

  it('sends an upgrade with a scheme-relative target to the local target, as a path', async () => {
    const other = await otherService();
    const { origin, fixture } = await setup(await upgradeOrigin());
    try {
      const result = await collectAnswer(streamDuplex(fixture.edge.open(upgradeHead(`//127.0.0.1:${other.port}/x`))));
      assert.equal(result.status, 101);
      assert.deepEqual(origin.targets, [`//127.0.0.1:${other.port}/x`]);
      assert.equal(other.connections.length, 0);
    } finally {
      await other.close();
    }
  });

  it('refuses an upgrade with an absolute-form target instead of connecting to the host it names', async () => {
    const other = await otherService();
    const { origin, fixture } = await setup(await upgradeOrigin());
    try {
      const result = await collectAnswer(streamDuplex(fixture.edge.open(upgradeHead(`http://127.0.0.1:${other.port}/`))));
      assert.equal(result.resetCode, ResetCode.UPSTREAM_ERROR);
      assert.equal(other.connections.length, 0);
      assert.deepEqual(origin.targets, []);
    } finally {
      await other.close();
    }
  });

  it('refuses a plain request with an absolute-form target rather than send it to the origin', async () => {
    const { origin, fixture } = await setup(await upgradeOrigin());
    const result = await visit(fixture, { path: 'http://127.0.0.1:1/' });
    assert.equal(result.resetCode, ResetCode.UPSTREAM_ERROR);
    assert.deepEqual(origin.targets, []);
    assert.equal((await fixture.nextLog()).status, 502);
  });

  it('keeps serving after refusing a target', async () => {
    const { fixture } = await setup(await upgradeOrigin());
    await collectAnswer(streamDuplex(fixture.edge.open(upgradeHead('http://127.0.0.1:1/'))));
    const result = await visit(fixture, { path: '/after' });
    assert.equal(result.status, 200);
    assert.equal(result.body.toString(), 'plain');
  });

  for (const [name, head] of [
    ['a space in the path', upgradeHead('/a b')],
    ['a header name that is not a token', { ...upgradeHead('/'), h: ['Host', 'origin.test', 'Bad Name', 'x', 'Upgrade', 'probe'] }],
  ] as const) {
    it(`resets an upgrade node:http cannot send (${name}) and keeps the session serving`, async () => {
      const { fixture } = await setup(await upgradeOrigin());
      const result = await collectAnswer(streamDuplex(fixture.edge.open(head)));
      assert.equal(result.resetCode, ResetCode.UPSTREAM_ERROR);
      assert.equal(fixture.edge.isClosed, false);
      assert.equal((await visit(fixture, { path: '/after' })).status, 200);
    });
  }
});
