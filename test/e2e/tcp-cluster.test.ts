import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { ApiClient, forward, type Tunnel } from '@svcrouter/sdk';
import { SSH, sshMissing, startSshd } from '@svcrouter/testkit/sshd';
import { api, type TestServer } from './harness/index.js';
import { freshDatabase, startNode, until, type TestDatabase } from './harness/cluster-support.js';
import { answers, connectFrom, exchange, holdPort, SECOND_HOST, startNodeOn } from './harness/tcp-cluster-support.js';
import { portOf, readAll, startTcpService, tcpPortRange } from './harness/tcp-support.js';

// Two svc-server nodes on one real PostgreSQL, each on its own loopback address (127.0.0.1 and
// 127.0.0.2) so both may listen on one TCP tunnel's port: the agent is on node a, visitors enter
// node b, whose connections travel over the peer link to a. Visitors connect from addresses of
// their own (127.0.0.9 and up), so the address that reaches the agent and the records is
// provably the visitor's, not a node's.
// Node ids of this file's own: the cluster's notifications reach every schema of the test
// database, and another suite's `node-a` leaving would read as this file's node leaving.

const SKIP_NOTICE = 'skipping the TCP cluster suite: set SVC_TEST_DATABASE_URL (apt-get install postgresql)';
const baseUrl = process.env.SVC_TEST_DATABASE_URL;
const NODE_B_HOST = SECOND_HOST;
const run = promisify(execFile);
/** Skipped on a laptop without psql or OpenSSH; CI installs them and fails without them. */
const PSQL_MISSING = existsSync('/usr/bin/psql') || process.env.CI === 'true' ? false : 'skipping psql: apt-get install postgresql-client';
const SSH_MISSING = process.env.CI === 'true' ? undefined : sshMissing();

if (baseUrl === undefined || baseUrl === '') {
  if (process.env.CI === 'true') {
    it('tcp cluster suite', () => assert.fail('SVC_TEST_DATABASE_URL is unset; CI must run the TCP cluster suite'));
  } else {
    process.stderr.write(`${SKIP_NOTICE}\n`);
    it('tcp cluster suite', { skip: SKIP_NOTICE }, () => {});
  }
} else {
  tcpClusterSuite(baseUrl);
}

function tcpClusterSuite(url: string): void {
  describe('a TCP tunnel on a two-node cluster', { timeout: 180_000 }, () => {
    let database: TestDatabase;
    let a: TestServer;
    let b: TestServer;
    let echo: ProxyEcho;
    let tunnel: Tunnel;
    let port: number;

    before(async () => {
      database = await freshDatabase(url);
      const range = await tcpPortRange(100);
      a = await startNode(database.url, 'tcp-a', { first: true, env: { SVC_TCP_PORTS: range } });
      b = await startNodeOn(database.url, 'tcp-b', NODE_B_HOST, range);
      echo = await startProxyEcho();
      tunnel = await forward({ proto: 'tcp', addr: echo.port, token: a.token!, serverUrl: a.url, proxyProtocol: 'v1' });
      port = portOf(tunnel.url);
      // Node b learns of the route by the cluster's notification and opens the port then.
      await until('node b listens on the tunnel port', () => answers(NODE_B_HOST, port));
    });
    after(async () => {
      await tunnel?.close();
      await echo?.close();
      await b?.close();
      await a?.close();
      await database?.drop();
    });

    it('carries a few MiB both ways unchanged from a visitor at node b, and the visitor FIN', async () => {
      const payload = randomBytes(4 * 1024 * 1024);
      const socket = await connectFrom(NODE_B_HOST, port, '127.0.0.9');
      const received = readAll(socket);
      // Ends its side at once and still reads the whole echo: the FIN travelled on its own.
      socket.end(payload);
      const echoed = await received;
      assert.equal(echoed.length, payload.length);
      assert.equal(sha256(echoed), sha256(payload));
      // The agent on node a sent the local service the visitor's own address (PROXY protocol).
      assert.ok(echo.sources.includes('127.0.0.9'), `PROXY sources: ${echo.sources.join(', ')}`);
    });

    it('carries the service FIN first: the visitor at node b still sends after it', async () => {
      const received: Array<Promise<string>> = [];
      const service = await startTcpService((socket) => {
        socket.end('bye first');
        received.push(readAll(socket).then((bytes) => bytes.toString()));
      });
      const second = await forward({ proto: 'tcp', addr: service.port, token: a.token!, serverUrl: a.url });
      try {
        const secondPort = portOf(second.url);
        await until('node b listens on the second port', () => answers(NODE_B_HOST, secondPort));
        const socket = await connectFrom(NODE_B_HOST, secondPort, '127.0.0.9');
        assert.equal((await readAll(socket)).toString(), 'bye first');
        socket.end('still talking');
        // The connections before were the probes that waited for the port; this one is the last.
        assert.equal(await received[received.length - 1], 'still talking');
      } finally {
        await second.close();
        await service.close();
      }
    });

    it('records the connection once, at the entry node, with the visitor address', async () => {
      const socket = await connectFrom(NODE_B_HOST, port, '127.0.0.10');
      const received = readAll(socket);
      socket.end('count me once');
      assert.equal((await received).toString(), 'count me once');
      const host = new URL(tunnel.url).host;
      type Row = { ip: string; host: string; method: string; proto: string; bytes: number; status: number };
      let rows: Row[] = [];
      await until('the record of the connection', async () => {
        const body = (await api(a, 'GET', '/v1/requests', { token: a.token! })).body as { requests: Row[] };
        rows = body.requests.filter((r) => r.host === host && r.ip === '127.0.0.10');
        return rows.length > 0;
      });
      assert.equal(rows.length, 1);
      assert.deepEqual(
        { method: rows[0]!.method, proto: rows[0]!.proto, status: rows[0]!.status, bytes: rows[0]!.bytes },
        { method: 'TCP', proto: 'tcp', status: 200, bytes: 2 * 'count me once'.length },
      );
    });

    it('logs a port node b cannot listen on, and serves the others', async () => {
      // A reserved address whose port another program holds on node b's address.
      const reserved = await new ApiClient({ baseUrl: a.url, token: a.token! }).tcpAddresses.reserve();
      const blockedPort = portOf(reserved.url);
      const blocker = await holdPort(NODE_B_HOST, blockedPort);
      const pinned = await forward({
        proto: 'tcp',
        addr: echo.port,
        token: a.token!,
        serverUrl: a.url,
        remoteAddr: reserved.addr,
        proxyProtocol: 'v1',
      });
      try {
        await b.proc.waitForLine(new RegExp(`"port":${blockedPort}.*cannot listen on the port of a TCP tunnel held on another node`));
        // Node a serves it; node b still serves the first tunnel.
        assert.equal(await exchange('127.0.0.1', blockedPort, 'via node a'), 'via node a');
        assert.equal(await exchange(NODE_B_HOST, port, 'via node b'), 'via node b');
      } finally {
        await pinned.close();
        await new Promise((resolve) => blocker.close(resolve));
      }
    });

    it('answers psql at node b: a real client through the relay', { skip: PSQL_MISSING }, async () => {
      // The suite's own PostgreSQL is the local service of a tunnel on node a.
      const database = new URL(url);
      const pg = await forward({ proto: 'tcp', addr: `127.0.0.1:${database.port}`, token: a.token!, serverUrl: a.url });
      try {
        const pgPort = portOf(pg.url);
        await until('node b listens on the PostgreSQL tunnel', () => listening(NODE_B_HOST, pgPort));
        const args = ['-h', NODE_B_HOST, '-p', String(pgPort), '-U', database.username || 'postgres', '-d', 'postgres'];
        const { stdout } = await run('psql', [...args, '-Atc', 'select 6 * 7']);
        assert.equal(stdout.trim(), '42');
      } finally {
        await pg.close();
      }
    });

    it('runs an ssh command at node b: OpenSSH through the relay', { skip: SSH_MISSING ?? false }, async () => {
      const sshd = await startSshd();
      const ssh = await forward({ proto: 'tcp', addr: sshd.port, token: a.token!, serverUrl: a.url });
      try {
        const sshPort = portOf(ssh.url);
        await until('node b listens on the ssh tunnel', () => listening(NODE_B_HOST, sshPort));
        const login = sshd.login.replace(/@.*$/, `@${NODE_B_HOST}`);
        const { stdout } = await run(SSH, ['-p', String(sshPort), ...sshd.clientOptions, login, 'echo through-node-b $((6*7))']);
        assert.equal(stdout.trim(), 'through-node-b 42');
      } finally {
        await ssh.close();
        await sshd.close();
      }
    });

    it('closes the port on node b once the agent stops', async () => {
      const open = await connectFrom(NODE_B_HOST, port, '127.0.0.9');
      open.on('error', () => undefined);
      const ended = new Promise((resolve) => open.once('end', resolve).once('close', resolve));
      open.resume();
      await tunnel.close();
      // The connection open at that moment is closed too.
      await ended;
      await until('node b refuses the port', async () => !(await answers(NODE_B_HOST, port)));
    });
  });
}

/** A local service behind `--proxy-protocol v1`: reads the PROXY line, keeps its source address, echoes the rest. */
interface ProxyEcho {
  port: number;
  sources: string[];
  close(): Promise<void>;
}

async function startProxyEcho(): Promise<ProxyEcho> {
  const sources: string[] = [];
  const service = await startTcpService((socket) => {
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const eol = head.indexOf('\r\n');
      if (eol < 0) return;
      socket.off('data', onData);
      // PROXY TCP4 <source> <destination> <source port> <destination port>
      sources.push(head.subarray(0, eol).toString().split(' ')[2] ?? '');
      socket.pause();
      socket.unshift(head.subarray(eol + 2));
      socket.pipe(socket);
    };
    socket.on('data', onData);
  });
  return { port: service.port, sources, close: () => service.close() };
}

/** Whether `host:port` accepts connections at all. */
async function listening(host: string, port: number): Promise<boolean> {
  try {
    (await connectFrom(host, port)).destroy();
    return true;
  } catch {
    return false;
  }
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
