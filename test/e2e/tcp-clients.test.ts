import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { SSH, SSH_KEYGEN, SSHD, startSshd, type TestSshd } from '@svcrouter/testkit/sshd';
import { REPO_ROOT, spawnNode, AGENT_BIN, startServer, type TestServer } from './harness/index.js';
import { tcpPortRange } from './harness/tcp-support.js';

// `svc tcp` in front of real servers, reached by their real clients: OpenSSH runs a command
// through the tunnel, and psql queries a throwaway PostgreSQL. Debian packages: openssh-server,
// openssh-client, postgresql (in .ci/run); without them the suites are skipped here, and fail in CI.

const run = promisify(execFile);

function needs(what: string, bins: string[]): boolean {
  const missing = bins.filter((bin) => !existsSync(bin));
  if (missing.length === 0) return true;
  const notice = `skipping the ${what} suite: ${missing.join(', ')} missing (apt-get install -y openssh-server openssh-client postgresql)`;
  if (process.env.CI === 'true') it(`${what} suite`, () => assert.fail(notice));
  else {
    process.stderr.write(`${notice}\n`);
    it(`${what} suite`, { skip: notice }, () => {});
  }
  return false;
}

/** Runs `svc tcp <target> [args]` and resolves once it prints its Forwarding line, with the port. */
async function startTcpAgent(server: TestServer, target: number | string, args: string[] = []) {
  const proc = spawnNode(AGENT_BIN, ['tcp', String(target), ...args], { SVC_SERVER: server.url, SVC_TOKEN: server.token }, 'agent');
  const match = await proc.waitForLine(/^Forwarding tcp:\/\/([^:\s]+):(\d+) -> (\S+)$/);
  return { proc, host: match[1]!, port: Number(match[2]), local: match[3]! };
}

describe('ssh through svc tcp', () => {
  if (!needs('ssh', [SSHD, SSH, SSH_KEYGEN])) return;
  let server: TestServer;
  let sshd: TestSshd;
  before(async () => {
    sshd = await startSshd();
    server = await startServer({ env: { SVC_TCP_PORTS: await tcpPortRange(100) } });
  });
  after(async () => {
    await sshd?.close();
    await server?.close();
  });

  it('runs a command over ssh -p <tunnel port>, and prints one line per closed connection', async () => {
    const agent = await startTcpAgent(server, sshd.port);
    try {
      assert.equal(agent.host, 'localhost');
      assert.equal(agent.local, `localhost:${sshd.port}`);
      const { stdout } = await run(SSH, ['-p', String(agent.port), ...sshd.clientOptions, sshd.login, 'echo through-the-tunnel $((6*7))']);
      assert.equal(stdout.trim(), 'through-the-tunnel 42');
      // time, TCP, visitor ip:port, duration, bytes each way.
      const line = await agent.proc.waitForLine(/^\d\d:\d\d:\d\d\.\d{3} TCP 127\.0\.0\.1:\d+ \d+ms in (\d+)B out (\d+)B closed$/);
      assert.ok(Number(line[1]) > 0 && Number(line[2]) > 0);
    } finally {
      await agent.proc.kill('SIGINT');
    }
  });
});

describe('psql through svc tcp', () => {
  if (!needs('psql', ['/usr/bin/psql', path.join(REPO_ROOT, 'scripts/start-test-postgres.sh')])) return;
  let server: TestServer;
  let pgUrl: URL;
  let pgDir = '';
  before(async () => {
    const started = await run(path.join(REPO_ROOT, 'scripts/start-test-postgres.sh'), []);
    pgUrl = new URL(started.stdout.trim());
    pgDir = /postgres data dir: (\S+)/.exec(started.stderr)?.[1] ?? '';
    server = await startServer({ env: { SVC_TCP_PORTS: await tcpPortRange(100) } });
  });
  after(async () => {
    await server?.close();
    if (pgDir) await run(path.join(REPO_ROOT, 'scripts/start-test-postgres.sh'), ['stop', pgDir]);
  });

  it('answers a query from psql through the tunnel', async () => {
    const agent = await startTcpAgent(server, `127.0.0.1:${pgUrl.port}`, ['--log-format', 'json']);
    try {
      const { stdout } = await run('psql', [
        '-h',
        '127.0.0.1',
        '-p',
        String(agent.port),
        '-U',
        'postgres',
        '-d',
        'postgres',
        '-At',
        '-c',
        'select 40 + 2',
      ]);
      assert.equal(stdout.trim(), '42');
      const started = JSON.parse(agent.proc.lines.find((l) => l.includes('"event":"started"'))!) as { port: number; url: string };
      assert.equal(started.port, agent.port);
      await agent.proc.waitForLine(/"event":"connection".*"outcome":"closed"/);
    } finally {
      await agent.proc.kill('SIGINT');
    }
  });
});
