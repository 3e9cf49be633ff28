import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, afterEach, before, describe, it } from 'node:test';
import { FLAG_ACK, FLAG_END, FrameType, MAX_FRAME_PAYLOAD, encodeFrame, encodeHeader, type Frame } from '@svcrouter/protocol';
import { api, startAgent, startOrigin, startServer, visit, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { rawExchange } from './harness/raw-exchange.js';
import { openHead, startRawAgent, type RawAgent } from './harness/raw-agent.js';

// An agent that lies in every field and frame it sends (packages/protocol/README.md is the
// contract). Whatever it sends, its own session may be closed for a protocol error, but the edge
// process keeps running, other accounts' tunnels keep serving, and nothing it sends reaches a
// visitor as bytes of the visitor's connection.

const HANG = { timeout: 60_000 };

/** The OPEN the edge sent for a visitor's request to `path`. */
function openFor(agent: RawAgent, path: string): Promise<Frame> {
  return agent.next((frame) => frame.type === FrameType.OPEN && openHead(frame).p === path);
}

/** Answers stream `id` with a status and a body, as an honest agent would. */
function reply(agent: RawAgent, id: number, status: number, body: string): void {
  agent.send(FrameType.HEADERS, 0, id, JSON.stringify({ s: status, h: ['content-length', String(Buffer.byteLength(body))] }));
  agent.send(FrameType.DATA, FLAG_END, id, body);
}

/** Resident memory of a process, in MiB (Linux). */
async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

describe('an agent that lies in every frame', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let honest: TestAgent;
  let hostileToken: string;
  let rssAtStart = 0;

  before(async () => {
    // Its sessions end by dropping the connection: a grace would keep each one's names against
    // the account's tunnel limit for the cases after it.
    server = await startServer({ env: { SVC_NAME_GRACE_MS: '0' } });
    origin = await startOrigin();
    hostileToken = await server.createAccount('liar@example.com');
    honest = await startAgent(server, { token: server.token, target: origin.port });
    rssAtStart = await rssMiB(server.proc.pid);
  });
  after(async () => {
    await honest?.close();
    await origin?.close();
    await server?.close();
  });
  afterEach(async () => {
    // Whatever the case did: the edge runs, and another account's tunnel serves.
    assert.equal(server.proc.child.exitCode, null);
    assert.equal((await visit(server, honest.hostname, '/echo')).status, 200);
  });

  /** A fresh raw session with one tunnel bound; resolves with it and its hostname. */
  async function boundAgent(): Promise<{ agent: RawAgent; hostname: string; tunnelId: string }> {
    const agent = await startRawAgent(server.url, hostileToken);
    const answer = await agent.bind();
    assert.equal(answer.type, 'bound', JSON.stringify(answer));
    const bound = answer as { hostname: string; tunnelId: string };
    return { agent, hostname: bound.hostname, tunnelId: bound.tunnelId };
  }

  it('gets a precise bindError for every bad bind field, and an ignored field never binds what it names', HANG, async () => {
    const agent = await startRawAgent(server.url, hostileToken);
    try {
      const refusals: Array<[Record<string, unknown>, string]> = [
        [{ subdomain: 'x'.repeat(70_000) }, 'NAME_INVALID'],
        [{ subdomain: 'Bad_Label' }, 'NAME_INVALID'],
        [{ subdomain: '' }, 'NAME_INVALID'],
        [{ subdomain: 'api' }, 'NAME_RESERVED'],
        [{ hostname: `${'a'.repeat(1_000_000)}.localhost` }, 'NAME_INVALID'],
        [{ hostname: 'victim.example.com' }, 'NAME_INVALID'],
        [{ hostname: 'localhost' }, 'NAME_INVALID'],
        [{ hostname: 'a.b.localhost' }, 'NAME_INVALID'],
        [{ hostname: honest.hostname }, 'NAME_TAKEN'],
        [{ hostname: honest.hostname.toUpperCase() }, 'NAME_TAKEN'],
        [{ domain: 'x'.repeat(100_000) }, 'DOMAIN_NOT_VERIFIED'],
      ];
      for (const [fields, code] of refusals) {
        const answer = await agent.bind(fields);
        assert.equal(answer.type, 'bindError', JSON.stringify(fields).slice(0, 80));
        assert.equal((answer as { code: string }).code, code, JSON.stringify(fields).slice(0, 80));
      }
      // Fields of the wrong type are ignored: the bind gets a fresh random name, nothing else.
      const ignored = await agent.bind({
        subdomain: 42,
        hostname: null,
        domain: ['x'],
        tunnelId: 'tun_someone_else',
        extra: { nested: 'x'.repeat(100_000) },
        __proto__: { polluted: true },
      });
      assert.equal(ignored.type, 'bound');
      assert.match((ignored as { hostname: string }).hostname, /^[a-z0-9]{10}\.localhost$/);
    } finally {
      agent.close();
    }
  });

  it('ignores control messages of the wrong shape, and cannot unbind another account’s tunnel', HANG, async () => {
    const { agent, hostname } = await boundAgent();
    try {
      const honestTunnels = (await api(server, 'GET', '/v1/tunnels', { token: server.token })).body as { tunnels: Array<{ id: string }> };
      const honestId = honestTunnels.tunnels[0]!.id;
      for (const message of ['bind', null, 7, [1, 2], {}, { type: 'bind' }, { type: 'bind', requestId: '1' }, { type: 'nonsense' }]) {
        agent.control(message);
      }
      agent.control({ type: 'unbind', tunnelId: honestId });
      agent.control({ type: 'unbind', tunnelId: { id: honestId } });
      // Still its own tunnel, still served.
      const visited = visit(server, hostname, '/after-junk');
      const open = await openFor(agent, '/after-junk');
      reply(agent, open.stream, 200, 'still here');
      assert.equal((await visited).text, 'still here');
    } finally {
      agent.close();
    }
  });

  it('caps the local address it claims, which the 502 page shows', HANG, async () => {
    const agent = await startRawAgent(server.url, hostileToken);
    try {
      const answer = await agent.bind({ local: `localhost:${'9'.repeat(1_000_000)}` });
      assert.equal(answer.type, 'bound');
      const hostname = (answer as { hostname: string }).hostname;
      const visited = visit(server, hostname, '/unreachable');
      const open = await openFor(agent, '/unreachable');
      agent.send(FrameType.RESET, 0, open.stream, 'UPSTREAM_UNREACHABLE');
      const page = await visited;
      assert.equal(page.status, 502);
      assert.ok(page.body.length < 4096, `a page of ${page.body.length} bytes`);
    } finally {
      agent.close();
    }
  });

  it('answers binds beyond 1,000 in flight on one session with a bindError at once', HANG, async () => {
    const agent = await startRawAgent(server.url, hostileToken);
    try {
      // All in one write, so the edge reads them before any has an answer.
      const ids = Array.from({ length: 1_100 }, (_, i) => 500_000 + i);
      agent.socket.write(
        Buffer.concat(
          ids.map((requestId) => encodeFrame(FrameType.CONTROL, 0, 0, Buffer.from(JSON.stringify({ type: 'bind', requestId })))),
        ),
      );
      const answers = await Promise.all(
        ids.map(async (requestId) => {
          const frame = await agent.next((f) => f.type === FrameType.CONTROL && f.payload.includes(`"requestId":${requestId},`));
          return JSON.parse(frame.payload.toString('utf8')) as { type: string; message?: string };
        }),
      );
      const refused = answers.filter((a) => a.type === 'bindError' && /too many binds in flight/.test(a.message ?? ''));
      assert.equal(refused.length, 100);
    } finally {
      agent.close();
    }
  });

  it('keeps a session whose pings answers carry lying stamps, and closes one that pings with the wrong length', HANG, async () => {
    const { agent, hostname } = await boundAgent();
    try {
      for (const stamp of [Number.NaN, -1e308, 1e308, Number.POSITIVE_INFINITY, 0]) {
        const payload = Buffer.alloc(8);
        payload.writeDoubleBE(stamp, 0);
        agent.send(FrameType.PING, FLAG_ACK, 0, payload);
      }
      agent.send(FrameType.PING, FLAG_ACK, 0, Buffer.alloc(1024));
      const visited = visit(server, hostname, '/after-pongs');
      const open = await openFor(agent, '/after-pongs');
      reply(agent, open.stream, 200, 'fine');
      assert.equal((await visited).text, 'fine');
      agent.send(FrameType.PING, 0, 0, Buffer.alloc(7));
      await agent.closed;
    } finally {
      agent.close();
    }
  });

  it(
    'survives WINDOW credit far past 2^32 on a stream, and closes the session for a WINDOW on stream 0 or of the wrong size',
    HANG,
    async () => {
      const { agent, hostname } = await boundAgent();
      try {
        const visited = visit(server, hostname, '/credit', { method: 'POST', body: 'x'.repeat(100_000) });
        const open = await openFor(agent, '/credit');
        const max = Buffer.alloc(4);
        max.writeUInt32BE(0xffffffff, 0);
        const flood = Buffer.concat(
          Array.from({ length: 20_000 }, () => Buffer.concat([encodeHeader(FrameType.WINDOW, 0, open.stream, 4), max])),
        );
        agent.socket.write(flood);
        reply(agent, open.stream, 200, 'credited');
        assert.equal((await visited).text, 'credited');

        const second = await boundAgent();
        second.agent.send(FrameType.WINDOW, 0, 0, max);
        await second.agent.closed;
        const third = await boundAgent();
        const probe = visit(server, third.hostname, '/short-window');
        const thirdOpen = await openFor(third.agent, '/short-window');
        third.agent.send(FrameType.WINDOW, 0, thirdOpen.stream, Buffer.alloc(3));
        await third.agent.closed;
        assert.equal((await probe).status, 502);
      } finally {
        agent.close();
      }
    },
  );

  it('drops frames on stream ids it never opened, or that are the edge’s own, and keeps serving', HANG, async () => {
    const { agent, hostname } = await boundAgent();
    try {
      for (const id of [2, 4, 1_000_000, 0x7ffffffe, 3, 999_999, 0xffffffff]) {
        agent.send(FrameType.HEADERS, 0, id, JSON.stringify({ s: 200, h: [] }));
        agent.send(FrameType.DATA, FLAG_END, id, 'stray');
        agent.send(FrameType.WINDOW, 0, id, Buffer.from([0, 1, 0, 0]));
        agent.send(FrameType.RESET, 0, id, 'CANCEL');
      }
      const visited = visit(server, hostname, '/after-strays');
      const open = await openFor(agent, '/after-strays');
      reply(agent, open.stream, 200, 'unharmed');
      assert.equal((await visited).text, 'unharmed');
    } finally {
      agent.close();
    }
  });

  it('refuses streams the agent opens itself, and closes the session for an OPEN with the edge’s parity or a reused id', HANG, async () => {
    const { agent, hostname } = await boundAgent();
    try {
      agent.send(FrameType.OPEN, 0, 1_001, JSON.stringify({ m: 'GET', p: '/', h: [], t: 'x' }));
      const refused = await agent.next((f) => f.type === FrameType.RESET && f.stream === 1_001);
      assert.equal(refused.payload.toString(), 'REFUSED');
      const visited = visit(server, hostname, '/after-open');
      const open = await openFor(agent, '/after-open');
      reply(agent, open.stream, 200, 'served');
      assert.equal((await visited).text, 'served');

      agent.send(FrameType.OPEN, 0, 1_001, '{}');
      await agent.closed;
      const second = await boundAgent();
      second.agent.send(FrameType.OPEN, 0, 2_000, '{}');
      await second.agent.closed;
    } finally {
      agent.close();
    }
  });

  it('gives the visitor the first head only, never data sent after END or before HEADERS on a kept-alive connection', HANG, async () => {
    const { agent, hostname } = await boundAgent();
    try {
      const host = `${hostname}:${server.httpPort}`;
      const exchange = rawExchange(
        server.httpPort,
        `GET /twice HTTP/1.1\r\nHost: ${host}\r\n\r\n` +
          `GET /chunked HTTP/1.1\r\nHost: ${host}\r\n\r\n` +
          `GET /data-first HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      );
      const twice = await openFor(agent, '/twice');
      agent.send(FrameType.HEADERS, 0, twice.stream, JSON.stringify({ s: 200, h: ['content-length', '2'] }));
      agent.send(FrameType.HEADERS, 0, twice.stream, JSON.stringify({ s: 500, h: ['x-second', '1'] }));
      agent.send(FrameType.DATA, FLAG_END, twice.stream, 'ok');
      agent.send(FrameType.DATA, 0, twice.stream, 'HTTP/1.1 200 OK\r\nInjected: after-end\r\n\r\n');
      const chunked = await openFor(agent, '/chunked');
      agent.send(FrameType.HEADERS, 0, chunked.stream, JSON.stringify({ s: 200, h: [] }));
      agent.send(FrameType.DATA, FLAG_END, chunked.stream, 'streamed');
      const dataFirst = await openFor(agent, '/data-first');
      agent.send(FrameType.DATA, 0, dataFirst.stream, 'HTTP/1.1 200 OK\r\nInjected: before-head\r\nContent-Length: 0\r\n\r\n');
      agent.send(FrameType.HEADERS, FLAG_END, dataFirst.stream, JSON.stringify({ s: 204, h: [] }));
      const result = await exchange;
      // The first body ends without a line break, so its next status line is found without an anchor.
      const statuses = [...result.text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
      assert.deepEqual(statuses, [200, 200, 502], result.text.slice(0, 400));
      assert.doesNotMatch(result.text, /Injected|x-second/i);
    } finally {
      agent.close();
    }
  });

  it('keeps a RESET reason or a response head of megabytes from the visitor and the edge', HANG, async () => {
    const { agent, hostname } = await boundAgent();
    try {
      const reset = visit(server, hostname, '/huge-reset');
      const resetOpen = await openFor(agent, '/huge-reset');
      agent.send(FrameType.RESET, 0, resetOpen.stream, 'R'.repeat(MAX_FRAME_PAYLOAD));
      const resetPage = await reset;
      assert.equal(resetPage.status, 502);
      assert.doesNotMatch(resetPage.text, /RRRR/);

      const head = visit(server, hostname, '/huge-head');
      const headOpen = await openFor(agent, '/huge-head');
      agent.send(FrameType.HEADERS, FLAG_END, headOpen.stream, JSON.stringify({ s: 200, h: ['x-big', 'v'.repeat(1024 * 1024)] }));
      assert.equal((await head).status, 502);
    } finally {
      agent.close();
    }
  });

  it('holds the edge’s memory to what it held before the lies (figure)', HANG, async (t) => {
    const grown = (await rssMiB(server.proc.pid)) - rssAtStart;
    t.diagnostic(`edge RSS grew ${grown.toFixed(1)} MiB over the suite`);
    assert.ok(grown < 256, `edge RSS grew ${grown.toFixed(1)} MiB`);
  });
});
