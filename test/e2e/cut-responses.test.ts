import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ResetCode, type StreamDuplex } from '@svcrouter/protocol';
import { startAgent, startServer, type TestServer } from './harness/index.js';
import { startHostileAgent, type HostileAgent } from './harness/hostile-agent.js';
import { FIRST, VISITORS, startCutOrigin, watch, type CutOrigin, type VisitorKind, type Watched } from './harness/cut-support.js';

// A response that did not complete must never look complete: HTTP/2 visitors get RST_STREAM
// INTERNAL_ERROR (never END_STREAM, never NO_ERROR), HTTP/1.1 visitors a connection closed
// without the chunked body's end or short of its Content-Length, upgraded visitors a reset.
// Each way a response can be cut is tried on every kind of visitor, with real processes.

const HANG = { timeout: 60_000 };

let nextKey = 0;

/** A visitor started by visitorsMidBody: its kind, and the key its response is held under. */
interface Visitor extends Watched {
  kind: VisitorKind;
  key: string;
}

/** Starts one visitor of each kind and waits until every one has its first body bytes. */
async function visitorsMidBody(server: TestServer, hostname: string, kinds: readonly VisitorKind[]): Promise<Visitor[]> {
  const visitors = kinds.map((kind) => {
    const key = `k${nextKey++}`;
    return { kind, key, ...watch(server, hostname, kind, key) };
  });
  await Promise.all(visitors.map((visitor) => visitor.started));
  return visitors;
}

/** Asserts that every visitor saw its response cut. */
async function assertAllCut(visitors: Visitor[]): Promise<void> {
  const endings = await Promise.all(visitors.map((visitor) => visitor.ended));
  endings.forEach((ending, i) => assert.ok(ending.cut, `${visitors[i]!.kind} saw a complete response: ${ending.detail}`));
}

describe('a response cut mid-body looks cut to every visitor', () => {
  let server: TestServer;
  let origin: CutOrigin;
  before(async () => {
    server = await startServer();
    origin = await startCutOrigin();
  });
  after(async () => {
    await origin?.close();
    await server?.close();
  });

  it('when the agent dies (SIGKILL)', HANG, async () => {
    const agent = await startAgent(server, { token: server.token, target: origin.port });
    const watched = await visitorsMidBody(server, agent.hostname, VISITORS);
    await agent.proc.kill('SIGKILL');
    await assertAllCut(watched);
  });

  for (const how of ['reset', 'close'] as const) {
    it(`when the local service ${how === 'reset' ? 'resets' : 'closes'} its connection mid-body`, HANG, async () => {
      const agent = await startAgent(server, { token: server.token, target: origin.port });
      try {
        // An upgraded connection the local service closes with a FIN has ended, not been cut.
        const kinds = how === 'close' ? VISITORS.filter((kind) => kind !== 'upgrade') : VISITORS;
        const watched = await visitorsMidBody(server, agent.hostname, kinds);
        for (const visitor of watched) origin.cut(visitor.key, how);
        await assertAllCut(watched);
      } finally {
        await agent.close();
      }
    });
  }

  /** A hostile agent (one that does what a real one must not) answering every stream with its head and FIRST, then holding it. */
  async function holdingAgent(
    head: (path: string) => { s: number; h: string[] },
  ): Promise<{ agent: HostileAgent; streams: StreamDuplex[] }> {
    const streams: StreamDuplex[] = [];
    const agent = await startHostileAgent(server.url, server.token!, (stream, request) => {
      stream.resume();
      stream.sendHeaders(head(request.p));
      stream.write(FIRST);
      streams.push(stream);
    });
    return { agent, streams };
  }

  /** The head the cut origin would send for `path` (see pathFor). */
  function originHead(path: string): { s: number; h: string[] } {
    if (path.startsWith('/upgrade/')) return { s: 101, h: ['connection', 'Upgrade', 'upgrade', 'cut-test'] };
    return { s: 200, h: path.startsWith('/length/') ? ['content-length', '1000000'] : [] };
  }

  it("when the agent's session drops", HANG, async () => {
    const { agent } = await holdingAgent(originHead);
    const watched = await visitorsMidBody(server, agent.hostname, VISITORS);
    agent.socket.destroy();
    await assertAllCut(watched);
  });

  it('when a Content-Length body ends short of its length with a clean end', HANG, async () => {
    const { agent, streams } = await holdingAgent(originHead);
    try {
      const watched = await visitorsMidBody(server, agent.hostname, ['h1-length', 'h1-post-length', 'h2-length']);
      for (const stream of streams) stream.end();
      await assertAllCut(watched);
    } finally {
      agent.close();
    }
  });

  it('when the trailers never came (the stream reset after the body)', HANG, async () => {
    const { agent, streams } = await holdingAgent(() => ({ s: 200, h: ['trailer', 'x-done'] }));
    try {
      const watched = await visitorsMidBody(server, agent.hostname, ['h1', 'h1-post', 'h2']);
      for (const stream of streams) stream.reset(ResetCode.UPSTREAM_ERROR);
      await assertAllCut(watched);
    } finally {
      agent.close();
    }
  });
});

describe('a response still in flight when the edge stops past SVC_DRAIN_MS', () => {
  let origin: CutOrigin;
  before(async () => {
    origin = await startCutOrigin();
  });
  after(async () => {
    await origin?.close();
  });

  it('looks cut to every visitor', HANG, async () => {
    const server = await startServer({ env: { SVC_DRAIN_MS: '200' } });
    const agent = await startAgent(server, { token: server.token, target: origin.port });
    try {
      const watched = await visitorsMidBody(server, agent.hostname, VISITORS);
      const stopped = server.close();
      await assertAllCut(watched);
      await stopped;
    } finally {
      await agent.close();
      await server.close();
    }
  });
});
