import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AGENT_BIN, runAgent, spawnNode, splitFailure, startServer, tempDir, type TestServer } from './harness/index.js';
import { nginxInstalled, startNginx, type TestNginx } from './harness/nginx.js';
import { startTcpService } from './harness/tcp-support.js';
import {
  answerHttp,
  curlHttps,
  opensslClient,
  selfSignedCertificate,
  startTlsService,
  type LocalCertificate,
} from './harness/tls-support.js';

// `svc tls` as users run it: the Forwarding line and a line per connection, openssl s_client
// and curl verifying the local service's own certificate, --tls-cert/--tls-key in front of a
// plain service, PROXY protocol to a real nginx, and access rules refused.

/** Runs `svc tls <target> [args]` and resolves once it prints its Forwarding line. */
async function startTlsAgent(server: TestServer, target: number, args: string[]) {
  const proc = spawnNode(
    AGENT_BIN,
    ['tls', String(target), '--log', 'stdout', ...args],
    { SVC_SERVER: server.url, SVC_TOKEN: server.token },
    'agent',
  );
  const match = await proc.waitForLine(/^Forwarding tls:\/\/([^:\s]+):(\d+) -> (\S+)$/);
  return { proc, host: match[1]!, port: Number(match[2]), local: match[3]! };
}

describe('svc tls', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.close();
  });

  it('prints tls://<host>:<port>, and a TLS line per connection, in front of a local TLS service', async () => {
    const cert = await selfSignedCertificate('agent-tls.localhost');
    const service = await startTlsService(cert, (socket) => answerHttp(socket, 'from the local TLS service'));
    const agent = await startTlsAgent(server, service.port, ['--subdomain', 'agent-tls']);
    try {
      assert.equal(agent.host, 'agent-tls.localhost');
      assert.equal(agent.port, server.httpsPort);
      assert.equal(agent.local, `localhost:${service.port}`);
      const { code, stdout } = await opensslClient(agent.host, agent.port, cert.certPath, 'GET / HTTP/1.1\r\nhost: x\r\n\r\n');
      assert.equal(code, 0, stdout);
      assert.match(stdout, /Verify return code: 0 \(ok\)/);
      assert.match(stdout, /from the local TLS service/);
      await agent.proc.waitForLine(/^\d\d:\d\d:\d\d\.\d{3} TLS 127\.0\.0\.1:\d+ \d+ms in \d+B out \d+B closed$/);
    } finally {
      await agent.proc.kill('SIGINT');
      await service.close();
      await cert.close();
    }
  });

  it('--tls-cert/--tls-key: the agent terminates TLS and the plain service gets plain bytes', async () => {
    const cert = await selfSignedCertificate('agent-own.localhost');
    const plain = await startTcpService((socket) => answerHttp(socket, 'plain service behind the agent'));
    const agent = await startTlsAgent(server, plain.port, [
      '--subdomain',
      'agent-own',
      '--tls-cert',
      cert.certPath,
      '--tls-key',
      cert.keyPath,
    ]);
    try {
      // Both ends close cleanly (openssl answers the agent's close_notify and reads to the end),
      // and the TLS layer then drops the stream under it unread: still a closed connection.
      const { code, stdout } = await opensslClient(agent.host, agent.port, cert.certPath, 'GET / HTTP/1.1\r\nhost: x\r\n\r\n');
      assert.equal(code, 0, stdout);
      assert.match(stdout, /Verify return code: 0 \(ok\)/);
      assert.match(stdout, /plain service behind the agent/);
      await agent.proc.waitForLine(/^\d\d:\d\d:\d\d\.\d{3} TLS 127\.0\.0\.1:\d+ \d+ms in \d+B out \d+B closed$/);
      const result = await curlHttps(agent.host, agent.port, cert.certPath);
      assert.ok(result.ok, result.stderr);
      assert.equal(result.stdout, 'plain service behind the agent');
    } finally {
      await agent.proc.kill('SIGINT');
      await plain.close();
      await cert.close();
    }
  });

  it('refuses access rules with a clear message, on the command line and in svc config check', async () => {
    const refused = await runAgent(['tls', '443', '--basic-auth', 'a:b'], { SVC_SERVER: server.url, SVC_TOKEN: server.token });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--basic-auth: access rules cannot apply to a TLS tunnel/);
    const dir = await tempDir('svc-tls-config-');
    try {
      const file = path.join(dir.dir, 'svc.yml');
      await writeFile(file, 'tunnels:\n  secure:\n    addr: 8443\n    proto: tls\n    cidrAllow: [10.0.0.0/8]\n    tlsCert: cert.pem\n');
      const check = await runAgent(['config', 'check', '--config', file], {});
      assert.equal(check.code, 1);
      assert.match(check.stderr, /cidrAllow.*access rules cannot apply to proto: tls/);
      assert.match(check.stderr, /tlsCert.*needs tlsKey/);
    } finally {
      await dir.remove();
    }
  });

  it('--tls-cert/--tls-key that are empty or not a pair: refused at start, saying which', async () => {
    const dir = await tempDir('svc-tls-pair-');
    const [one, two] = [await selfSignedCertificate('one.localhost'), await selfSignedCertificate('two.localhost')];
    try {
      const empty = path.join(dir.dir, 'e.pem');
      await writeFile(empty, '');
      const run = (cert: string, key: string) =>
        runAgent(['tls', '9443', '--tls-cert', cert, '--tls-key', key], { SVC_SERVER: server.url, SVC_TOKEN: server.token });
      const blank = await run(empty, empty);
      assert.equal(blank.code, 1, blank.stderr);
      assert.equal(splitFailure(blank.stderr).sentence, 'the TLS certificate (tlsCert, --tls-cert) is empty');
      const mismatched = await run(one.certPath, two.keyPath);
      assert.equal(mismatched.code, 1, mismatched.stderr);
      assert.match(
        splitFailure(mismatched.stderr).sentence,
        /^the TLS key \(tlsKey, --tls-key\) is not the key of the TLS certificate .*CN=one\.localhost$/,
      );
    } finally {
      await one.close();
      await two.close();
      await dir.remove();
    }
  });

  describe('PROXY protocol to a real nginx terminating TLS', () => {
    if (!nginxInstalled()) {
      it('proxy protocol', { skip: 'nginx missing (apt-get install -y nginx-light)' }, () => {});
      return;
    }
    let nginx: TestNginx;
    let cert: LocalCertificate;
    before(async () => {
      cert = await selfSignedCertificate('proxied.localhost');
      nginx = await startNginx(
        'ssl proxy_protocol',
        `ssl_certificate ${cert.certPath};
    ssl_certificate_key ${cert.keyPath};
    location / { default_type text/plain; return 200 "visitor $proxy_protocol_addr"; }`,
      );
    });
    after(async () => {
      await nginx?.close();
      await cert?.close();
    });

    for (const version of ['v1', 'v2'] as const) {
      it(`nginx reads the visitor's address from a ${version} header sent before the ClientHello`, async () => {
        const agent = await startTlsAgent(server, nginx.port, ['--subdomain', 'proxied', '--proxy-protocol', version]);
        try {
          const result = await curlHttps(agent.host, agent.port, cert.certPath);
          assert.ok(result.ok, result.stderr);
          assert.equal(result.stdout, 'visitor 127.0.0.1');
        } finally {
          await agent.proc.kill('SIGINT');
        }
      });
    }
  });
});
