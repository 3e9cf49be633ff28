import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import { describe, it } from 'node:test';
import WebSocket from 'ws';
import { h2Request, h2Session } from './harness/h2-visitor.js';
import {
  edgeUrl,
  loopbackLookup,
  serverSuite,
  spawnAgent,
  startAgent,
  startOrigin,
  visit,
  type TestAgent,
  type TestServer,
} from './harness/index.js';

// A name whose agent lost its connection is in its grace period (SVC_NAME_GRACE_MS): requests for
// it wait up to SVC_HOLD_MS for the agent to bind it again, and reach the origin then, instead of
// getting the offline page.

const HANG = { timeout: 60_000 };

/** Kills the agent without a goodbye (SIGKILL) and waits until the edge has noticed. */
async function dropAgent(server: TestServer, agent: TestAgent, subdomain: string): Promise<void> {
  const unbound = server.proc.waitForLine(new RegExp(`${subdomain}\\.localhost.*"clean":false.*tunnel unbound`));
  await agent.proc.kill('SIGKILL');
  await unbound;
}

/** Waits for the edge to log that `count` requests are held for `subdomain`. */
function held(server: TestServer, subdomain: string, count: number): Promise<unknown> {
  return server.proc.waitForLine(new RegExp(`${subdomain}\\.localhost.*"held":${count}\\b.*request held for a reconnect`));
}

/** Resolves once the server has printed `count` lines matching `pattern` (it checks on each output chunk). */
function linesMatching(server: TestServer, pattern: RegExp, count: number): Promise<void> {
  const { proc } = server;
  const outputs = [proc.child.stdout!, proc.child.stderr!];
  const enough = (): boolean => [...proc.lines, ...proc.stderrLines].filter((line) => pattern.test(line)).length >= count;
  if (enough()) return Promise.resolve();
  return new Promise((resolve) => {
    // Registered after the Proc's own listeners, so a chunk's lines are kept by the time this runs.
    const check = (): void => {
      if (!enough()) return;
      for (const output of outputs) output.off('data', check);
      resolve();
    };
    for (const output of outputs) output.on('data', check);
  });
}

/** A raw HTTP/1.1 GET on its own connection: the whole answer as text once the edge closes or completes it. */
function rawGet(server: TestServer, hostname: string, path: string): { socket: net.Socket; answer: Promise<string> } {
  const socket = net.connect(server.httpPort, '127.0.0.1');
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => undefined);
  const answer = once(socket, 'close').then(() => Buffer.concat(chunks).toString('latin1'));
  return { socket, answer };
}

describe('requests held while an agent reconnects', () => {
  const system = serverSuite();

  it(
    'delivers an HTTP/1.1 GET, an HTTP/1.1 and an HTTP/2 POST with their bodies intact, and a WebSocket, once the agent is back',
    HANG,
    async () => {
      const { server, origin } = system;
      const agent = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'gap' });
      await dropAgent(server, agent, 'gap');

      const get = visit(server, 'gap.localhost', '/echo?during=gap');
      const body = randomBytes(256 * 1024);
      const post = visit(server, 'gap.localhost', '/echo', { method: 'POST', body });
      const h2 = h2Session(server, 'gap.localhost');
      const h2Body = randomBytes(48 * 1024).toString('hex');
      const h2Post = h2Request(h2, { ':method': 'POST', ':path': '/echo' }, h2Body);
      const ws = new WebSocket(edgeUrl(server, 'gap.localhost', '/ws').replace(/^http/, 'ws'), { lookup: loopbackLookup });
      const opened = once(ws, 'open');
      await held(server, 'gap', 4);

      const back = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'gap' });
      try {
        await server.proc.waitForLine(/gap\.localhost.*"delivered":4\b.*held requests delivered/);
        const got = await get;
        assert.equal(got.status, 200);
        assert.equal((JSON.parse(got.text) as { url: string }).url, '/echo?during=gap');
        const posted = await post;
        assert.equal(posted.status, 200);
        const echoed = JSON.parse(posted.text) as { bodySha256: string; bodyLength: number };
        assert.equal(echoed.bodyLength, body.length);
        assert.equal(echoed.bodySha256, createHash('sha256').update(body).digest('hex'));
        const h2Got = await h2Post;
        assert.equal(h2Got.status, 200);
        assert.equal((JSON.parse(h2Got.text) as { bodySha256: string }).bodySha256, createHash('sha256').update(h2Body).digest('hex'));
        await opened;
        const reply = once(ws, 'message') as Promise<[Buffer]>;
        ws.send('held, then delivered');
        assert.equal((await reply)[0].toString('utf8'), 'held, then delivered');
      } finally {
        ws.terminate();
        h2.close();
        await back.close();
      }
    },
  );

  it('loses none of the requests sent while the agent is killed and restarted', HANG, async (t) => {
    const { server, origin } = system;
    const agent = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'steady' });
    const results: Array<{ startedAt: number; status: number }> = [];
    let running = true;
    const worker = async (): Promise<void> => {
      while (running) {
        const startedAt = performance.now();
        const status = await visit(server, 'steady.localhost', '/echo').then(
          (answer) => answer.status,
          () => 0,
        );
        results.push({ startedAt, status });
      }
    };
    const workers = Array.from({ length: 4 }, () => worker());
    const before = (): number => results.filter((r) => r.status === 200).length;
    while (before() < 20) await once(origin.activity, 'idle');
    const killedAt = performance.now();
    await dropAgent(server, agent, 'steady');
    const unboundAt = performance.now();
    // A burst on top of the steady visitors, all while no agent is connected.
    const burst = Array.from({ length: 50 }, () => visit(server, 'steady.localhost', '/echo?burst=1').then((answer) => answer.status));
    await held(server, 'steady', 54);
    const back = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'steady' });
    const backAt = performance.now();
    const burstStatuses = await Promise.all(burst);
    const after = results.length;
    while (results.length < after + 20) await once(origin.activity, 'idle');
    running = false;
    await Promise.all(workers);
    await back.close();

    // Requests sent between the kill and the edge noticing it went to the dead session: they
    // cannot be saved, and are reported apart.
    const sentToDeadSession = results.filter((r) => r.startedAt < unboundAt && r.status !== 200);
    const afterDrop = [
      ...results.filter((r) => r.startedAt >= unboundAt),
      ...burstStatuses.map((status) => ({ startedAt: unboundAt, status })),
    ];
    const lost = afterDrop.filter((r) => r.status !== 200);
    t.diagnostic(
      `sent after the edge saw the drop: ${afterDrop.length}, lost ${lost.length}; ` +
        `sent before: ${results.filter((r) => r.startedAt < unboundAt).length}, of which ${sentToDeadSession.length} reached the dead session and failed; ` +
        `agent away ${Math.round(backAt - killedAt)} ms`,
    );
    assert.deepEqual(lost, []);
  });

  it('gives another account neither the name nor the requests held for it', HANG, async () => {
    const { server, origin } = system;
    const otherOrigin = await startOrigin();
    const otherToken = await server.createAccount('other-hold@example.com');
    const agent = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'mine' });
    await dropAgent(server, agent, 'mine');
    const waiting = visit(server, 'mine.localhost', '/echo?for=owner');
    await held(server, 'mine', 1);

    const taker = spawnAgent(server, { token: otherToken, target: otherOrigin.port, subdomain: 'mine' });
    const { code } = await taker.exited;
    assert.notEqual(code, 0);
    assert.match(taker.stderrLines.join('\n'), /mine\.localhost is already in use by another account/);

    const back = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'mine' });
    try {
      const got = await waiting;
      assert.equal(got.status, 200);
      assert.equal((JSON.parse(got.text) as { url: string }).url, '/echo?for=owner');
      assert.equal(otherOrigin.seen.length, 0);
    } finally {
      await back.close();
      await otherOrigin.close();
    }
  });

  it('answers the offline page at once beyond 100 held requests, and frees a slot when its visitor leaves', HANG, async () => {
    const { server, origin } = system;
    const agent = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'full' });
    await dropAgent(server, agent, 'full');
    const waiting = Array.from({ length: 100 }, (_, i) => rawGet(server, 'full.localhost', `/echo?n=${i}`));
    await held(server, 'full', 100);

    // Answered while the 100 still wait: the edge did not hold it.
    const extra = await rawGet(server, 'full.localhost', '/echo?n=extra').answer;
    assert.match(extra, /^HTTP\/1\.1 404 /);
    assert.match(extra, /No agent is connected for full\.localhost/);

    const left = server.proc.waitForLine(/full\.localhost.*"held":99\b.*held request dropped: the visitor left/);
    waiting[0]!.socket.destroy();
    await left;
    const late = rawGet(server, 'full.localhost', '/echo?n=late');
    await linesMatching(server, /full\.localhost.*"held":100\b.*request held for a reconnect/, 2);

    const back = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'full' });
    try {
      await server.proc.waitForLine(/full\.localhost.*"delivered":100\b.*held requests delivered/);
      for (const request of [...waiting.slice(1), late]) assert.match(await request.answer, /^HTTP\/1\.1 200 /);
    } finally {
      await back.close();
    }
  });
});

describe('a request held past SVC_HOLD_MS', () => {
  const system = serverSuite({ env: { SVC_HOLD_MS: '300' } });

  it('gets the offline page, on HTTP/1.1 and on a WebSocket upgrade', HANG, async () => {
    const { server, origin } = system;
    const agent = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'late' });
    await dropAgent(server, agent, 'late');
    const get = rawGet(server, 'late.localhost', '/echo');
    const ws = new WebSocket(edgeUrl(server, 'late.localhost', '/ws').replace(/^http/, 'ws'), { lookup: loopbackLookup });
    ws.on('error', () => undefined);
    const refused = once(ws, 'unexpected-response') as Promise<[unknown, { statusCode: number }]>;
    await held(server, 'late', 2);

    const answer = await get.answer;
    assert.match(answer, /^HTTP\/1\.1 404 /);
    assert.match(answer, /No agent is connected for late\.localhost/);
    assert.equal((await refused)[1].statusCode, 404);
    ws.terminate();
  });
});
