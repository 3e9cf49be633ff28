import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { Messages } from '@svcrouter/protocol';
import { freshDatabase, startNode, until, type TestDatabase, postgresSuite } from './harness/cluster-support.js';
import { MiB, connectH2, h2Request, readText, request, writeChunks } from './harness/data-path-support.js';
import {
  api,
  edgeUrl,
  loopbackLookup,
  patternChunk,
  patternSha256,
  PATTERN_CHUNK_BYTES,
  spawnNode,
  SERVER_BIN,
  startAgent,
  startOrigin,
  visit,
  type TestAgent,
  type TestOrigin,
  type TestServer,
} from './harness/index.js';

// Three svc-server processes on one real PostgreSQL: the agent's session is held by node A,
// visitors come in through B and C, and the API is called on any node.

/** Bounds a hung test; not a timing assertion. */
const HANG = { timeout: 60_000 };

postgresSuite('cluster suite', clusterSuite);

interface NodeRow {
  nodeId: string;
  state: string;
  sessions: number;
  routes: number;
}

/** svc_transfer_bytes_total of a node, both directions. */
async function transferBytes(node: TestServer): Promise<number> {
  const text = await fetch(`${node.url}/metrics`).then((response) => response.text());
  let total = 0;
  for (const match of text.matchAll(/^svc_transfer_bytes_total\{direction="(?:in|out)"\} (\d+)$/gm)) total += Number(match[1]);
  return total;
}

interface RequestRecord {
  path: string;
  ip: string;
  status: number;
}

function clusterSuite(url: string): void {
  describe('several edge nodes on one PostgreSQL', () => {
    let database: TestDatabase;
    let a: TestServer;
    let b: TestServer;
    let c: TestServer;
    let origin: TestOrigin;
    let agent: TestAgent;
    let token: string;
    /** A second key of the account, made by the revocation test. */
    let adminToken: string;

    before(async () => {
      database = await freshDatabase(url);
      // A first: it creates the local account on the empty store; B and C join the same store.
      a = await startNode(database.url, 'node-a', { first: true });
      token = a.token!;
      [b, c] = await Promise.all([startNode(database.url, 'node-b'), startNode(database.url, 'node-c')]);
      origin = await startOrigin();
      agent = await startAgent(a, { token, target: origin.port });
      // The route travels by NOTIFY and the links come up on their own: wait until both entry nodes serve it.
      for (const node of [b, c]) {
        await until(
          `${agent.hostname} routed through ${node.url}`,
          async () => (await visit(node, agent.hostname, '/status/204')).status === 204,
        );
      }
    });

    after(async () => {
      await agent?.close();
      await Promise.all([a, b, c].map((node) => node?.close()));
      await origin?.close();
      await database?.drop();
    });

    it('serves a plain request through B and C as A would, with the visitor address in X-Forwarded-For', HANG, async () => {
      for (const node of [b, c]) {
        const res = await visit(node, agent.hostname, '/echo?via=peer', { headers: { 'x-forwarded-for': '203.0.113.9' } });
        assert.equal(res.status, 200);
        assert.equal(res.headers['x-origin'], 'yes');
        assert.deepEqual(res.headers['set-cookie'], ['a=1', 'b=2']);
        const echoed = JSON.parse(res.text) as { headers: Record<string, string>; url: string };
        assert.equal(echoed.url, '/echo?via=peer');
        // The visitor's own hop only: the node-to-node hop adds nothing.
        assert.equal(echoed.headers['x-forwarded-for'], '203.0.113.9, 127.0.0.1');
        assert.equal(echoed.headers['x-forwarded-host'], `${agent.hostname}:${node.httpPort}`);
        assert.equal(echoed.headers['x-forwarded-proto'], 'http');
      }
    });

    it('carries trailers both ways through B, node to node', HANG, async () => {
      const res = await request(b, agent.hostname, '/trailers', {
        method: 'POST',
        body: (req) => {
          req.write('upload');
          req.addTrailers({ 'x-request-sum': '42' });
          req.end();
        },
      });
      assert.equal(await readText(res), 'body');
      assert.deepEqual(res.trailers, { 'x-checksum': 'sha256-abc', 'x-echo': '42' });
    });

    it('carries a 50 MiB upload through C intact (sha256)', HANG, async () => {
      const chunks = (50 * MiB) / PATTERN_CHUNK_BYTES;
      const res = await request(c, agent.hostname, '/upload', {
        method: 'POST',
        headers: { 'content-length': String(50 * MiB) },
        body: (req) => void writeChunks(req, chunks, patternChunk).then(() => req.end()),
      });
      assert.equal(res.statusCode, 200);
      const answer = JSON.parse(await readText(res)) as { bodySha256: string; bodyLength: number };
      assert.equal(answer.bodyLength, 50 * MiB);
      assert.equal(answer.bodySha256, patternSha256(50 * MiB));
    });

    it('delivers server-sent events through B one by one, as the origin sends them', HANG, async () => {
      const res = await request(b, agent.hostname, '/sse?count=3');
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'text/event-stream');
      await origin.sse.connected;
      res.setEncoding('utf8');
      const events = res[Symbol.asyncIterator]() as AsyncIterator<string>;
      let text = '';
      for (let index = 0; index < 3; index++) {
        origin.sse.next();
        while (!text.includes(`data: event ${index}\n\n`)) {
          const { value, done } = await events.next();
          assert.ok(!done, `stream ended before event ${index}`);
          text += value;
        }
        assert.ok(!text.includes(`event ${index + 1}`));
      }
      assert.equal((await events.next()).done, true);
    });

    it('echoes WebSocket messages through C', HANG, async () => {
      const ws = new WebSocket(edgeUrl(c, agent.hostname, '/ws').replace(/^http/, 'ws'), { lookup: loopbackLookup });
      await once(ws, 'open');
      for (const data of ['hello across nodes', Buffer.from([0, 1, 2, 255])]) {
        const reply = once(ws, 'message') as Promise<[Buffer, boolean]>;
        ws.send(data);
        const [message, isBinary] = await reply;
        assert.equal(isBinary, Buffer.isBuffer(data));
        assert.deepEqual(message, Buffer.isBuffer(data) ? data : Buffer.from(data));
      }
      ws.close();
      await once(ws, 'close');
    });

    it('the inspector records a request carried between nodes once, with the visitor address, readable on every node', HANG, async () => {
      const marker = `/status/201?once=${Date.now()}`;
      const later = `/status/202?later=${Date.now()}`;
      assert.equal((await visit(b, agent.hostname, marker)).status, 201);
      assert.equal((await visit(a, agent.hostname, later)).status, 202);
      const records = async (node: TestServer): Promise<RequestRecord[]> =>
        ((await api(node, 'GET', '/v1/requests?limit=1000', { token })).body as { requests: RequestRecord[] }).requests;
      // The later request, served by the holder itself, is flushed no sooner than a copy of the first would be.
      await until('both records stored', async () => (await records(c)).some((r) => r.path === later));
      for (const node of [a, b, c]) {
        const found = (await records(node)).filter((r) => r.path === marker);
        assert.equal(found.length, 1, JSON.stringify(found));
        assert.equal(found[0]!.ip, '127.0.0.1');
        assert.equal(found[0]!.status, 201);
      }
    });

    it('cluster status lists the three nodes, up, with the agent session on A', HANG, async () => {
      // Sessions are recorded with each heartbeat: wait for A's, then ask the command.
      await until(
        'A reports its session',
        async () => (await database.query('select sessions from cluster_nodes where node_id = $1', ['node-a']))[0]?.sessions === 1,
      );
      const result = await c.cli(['cluster', 'status', '--json']);
      assert.equal(result.code, 0, result.stderr);
      const { nodes } = JSON.parse(result.stdout) as { nodes: NodeRow[] };
      assert.deepEqual(
        nodes.map((n) => [n.nodeId, n.state, n.sessions, n.routes]),
        [
          ['node-a', 'up', 1, 1],
          ['node-b', 'up', 0, 0],
          ['node-c', 'up', 0, 0],
        ],
      );
    });

    it('HTTP/2 visitors through B get the same answer', HANG, async () => {
      const session = await connectH2(b, agent.hostname);
      try {
        const { headers, text } = await h2Request(session, { ':method': 'GET', ':path': '/echo?h2=1' });
        assert.equal(headers[':status'], 200);
        const echoed = JSON.parse(text) as { headers: Record<string, string> };
        assert.equal(echoed.headers['x-forwarded-proto'], 'https');
        assert.equal(echoed.headers['x-forwarded-for'], '127.0.0.1');
      } finally {
        session.close();
      }
    });

    it('the holder counts nothing for a request another node carried to it; the entry node counts it', HANG, async () => {
      const before = await Promise.all([a, b].map((node) => transferBytes(node)));
      const res = await request(b, agent.hostname, '/upload', {
        method: 'POST',
        headers: { 'content-length': String(MiB) },
        body: (req) => void writeChunks(req, MiB / PATTERN_CHUNK_BYTES, patternChunk).then(() => req.end()),
      });
      await readText(res);
      const [afterA, afterB] = await Promise.all([a, b].map((node) => transferBytes(node)));
      assert.equal(afterA, before[0]);
      assert.ok(afterB! - before[1]! >= MiB, `B counted ${afterB! - before[1]!} bytes`);
    });

    it('a peer with the wrong secret is refused, and serves no tunnel held elsewhere', HANG, async () => {
      const stranger = await startNode(database.url, 'node-x', { secret: 'not-the-cluster-secret-42' });
      try {
        await a.proc.waitForLine(/"peer":"node-x".*"reason":"wrong cluster secret".*"msg":"peer link refused"/);
        await stranger.proc.waitForLine(/"peer":"node-a".*refused the link with 401.*"msg":"peer link to node down"/);
        const page = await visit(stranger, agent.hostname, '/status/204');
        assert.equal(page.status, 404);
        assert.match(page.text, new RegExp(Messages.TUNNEL_OFFLINE));
      } finally {
        await stranger.close();
      }
    });

    it('DELETE /v1/tunnels/:id on B releases a tunnel held by A: the agent exits, no node serves it', HANG, async () => {
      const pinned = await startAgent(a, { token, target: origin.port, subdomain: 'deleted-elsewhere' });
      await until('C routes the pinned name', async () => (await visit(c, pinned.hostname, '/status/204')).status === 204);
      const tunnels = (await api(b, 'GET', '/v1/tunnels', { token })).body as {
        tunnels: Array<{ id: string; host: string; status: string }>;
      };
      const tunnel = tunnels.tunnels.find((t) => t.host === pinned.hostname);
      assert.equal(tunnel?.status, 'online');
      assert.equal((await api(b, 'DELETE', `/v1/tunnels/${tunnel.id}`, { token })).status, 204);
      const { code } = await pinned.proc.exited;
      assert.equal(code, 0);
      assert.ok(pinned.proc.stderrLines.includes(`tunnel ${pinned.hostname} was deleted through the API`), pinned.proc.output);
      await until('C stops routing the deleted name', async () => (await visit(c, pinned.hostname, '/')).status === 404);
    });

    it('a newer agent of the same account binding a name held on A through B takes it over', HANG, async () => {
      const first = await startAgent(a, { token, target: origin.port, subdomain: 'moving' });
      await until('C routes the name to A', async () => (await visit(c, first.hostname, '/status/204')).status === 204);
      const other = await startOrigin();
      try {
        const second = await startAgent(b, { token, target: other.port, subdomain: 'moving' });
        const { code } = await first.proc.exited;
        assert.equal(code, 0);
        assert.match(first.proc.output, /moving\.localhost was taken over by a newer agent of the same account/);
        await until('C routes the name to B', async () => {
          await visit(c, second.hostname, '/status/204');
          return other.seen.length > 0;
        });
        await second.close();
      } finally {
        await other.close();
      }
    });

    it('revoking the key on C drops the agent held by A within a second', HANG, async () => {
      const second = (await api(c, 'POST', '/v1/keys', { token }, { description: 'admin' })).body as { token: string };
      adminToken = second.token;
      const keys = (await api(c, 'GET', '/v1/keys', { token: second.token })).body as { keys: Array<{ id: string; prefix: string }> };
      const key = keys.keys.find((k) => token.startsWith(k.prefix) && !second.token.startsWith(k.prefix));
      assert.ok(key);
      const exited = agent.proc.exited;
      const started = performance.now();
      assert.equal((await api(c, 'DELETE', `/v1/keys/${key.id}`, { token: second.token })).status, 204);
      await exited;
      const elapsedMs = performance.now() - started;
      assert.ok(elapsedMs < 1000, `the agent on A was dropped ${Math.round(elapsedMs)} ms after the revocation on C`);
      assert.match(agent.proc.output, new RegExp(Messages.TOKEN_INVALID));
      await until('B stops routing the revoked agent', async () => (await visit(b, agent.hostname, '/')).status === 404);
      // Ended on purpose, not lost: A holds no visitor for a reconnect the revoked key cannot make.
      assert.equal((await visit(a, agent.hostname, '/')).status, 404);
      const held = [...a.proc.lines, ...a.proc.stderrLines].filter((line) => /request held for a reconnect/.test(line));
      assert.deepEqual(held, []);
    });

    it('a node that dies without a goodbye loses its leases within 10 s', HANG, async () => {
      // The first token is revoked by now: the key made to revoke it starts this agent.
      const lateToken = adminToken;
      const fresh = await startAgent(a, { token: lateToken, target: origin.port });
      await until('B routes the agent on A', async () => (await visit(b, fresh.hostname, '/status/204')).status === 204);
      const tunnelStatus = async (): Promise<string | undefined> =>
        (
          (await api(b, 'GET', '/v1/tunnels', { token: lateToken })).body as { tunnels: Array<{ host: string; status: string }> }
        ).tunnels.find((t) => t.host === fresh.hostname)?.status;
      assert.equal(await tunnelStatus(), 'online');
      a.proc.child.kill('SIGKILL');
      await a.proc.exited;
      const killedAt = performance.now();
      // The link to A is gone at once, so visitors get the offline page without waiting for the lease.
      await until('B answers offline for the dead node', async () => (await visit(b, fresh.hostname, '/')).status === 404);
      // The lease runs out 10 s after A's last renewal (before the kill): the API says offline then.
      await until('B lists the tunnel offline', async () => (await tunnelStatus()) === 'offline', 400);
      const elapsedMs = performance.now() - killedAt;
      assert.ok(elapsedMs < 11_000, `the dead node's lease held ${Math.round(elapsedMs)} ms`);
      await fresh.close();
    });
  });

  it('a node with SVC_NODE_URL and no SVC_CLUSTER_SECRET refuses to start, saying why', HANG, async () => {
    const proc = spawnNode(
      SERVER_BIN,
      ['start'],
      { SVC_DATABASE_URL: url, SVC_NODE_URL: 'http://127.0.0.1:0', SVC_HTTP_PORT: '0', SVC_HTTPS_PORT: '0' },
      'server',
    );
    const { code } = await proc.exited;
    assert.equal(code, 2);
    assert.match(
      proc.output,
      /svc-server: invalid SVC_CLUSTER_SECRET: SVC_NODE_URL is set, so the secret shared by the nodes must be set too/,
    );
  });
}
