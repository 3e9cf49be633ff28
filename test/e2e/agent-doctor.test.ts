import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, runAgent, startServer, type TestServer } from './harness/index.js';
import { startUpgradeCuttingProxy, type UpgradeCuttingProxy } from './harness/doctor-support.js';

/** Small transfers keep the suite fast; the product's default is 100 MiB. */
const TRANSFER = '2MiB';
const CHECKS = ['server', 'token', 'clock', 'tunnel', 'tls', 'http1', 'http2', 'websocket', 'sse', 'upload', 'download', 'offline'];

/** Runs `svc doctor` against `server` with SVC_TOKEN and, unless told otherwise, SVC_CA_FILE. */
function doctor(server: TestServer, env: Record<string, string | undefined> = {}, args: string[] = []) {
  return runAgent(['doctor', '--transfer-size', TRANSFER, ...args], {
    SVC_SERVER: server.url,
    SVC_TOKEN: server.token,
    SVC_CA_FILE: server.caPath,
    ...env,
  });
}

/** The printed line of check `name`, and the hint line under it when there is one. */
function lineOf(stdout: string, name: string): { line: string; hint: string | undefined } {
  const lines = stdout.split('\n');
  const index = lines.findIndex((line) => new RegExp(`^(ok  |FAIL|skip)  ${name} `).test(line));
  assert.ok(index >= 0, `no line for ${name} in:\n${stdout}`);
  const next = lines[index + 1]?.trim();
  return { line: lines[index]!, hint: next?.startsWith('hint: ') ? next.slice('hint: '.length) : undefined };
}

// svc doctor: every check through the real public URL, and each failure with its hint.
describe('svc doctor', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.close();
  });

  it('passes every check against a healthy server, one line each in order, and exits 0', async () => {
    const { code, stdout, stderr } = await doctor(server);
    assert.equal(code, 0, `${stdout}\n${stderr}`);
    const lines = stdout.split('\n').filter((line) => /^(ok  |FAIL|skip)  /.test(line));
    assert.deepEqual(
      lines.map((line) => line.slice(6).split(' ')[0]),
      CHECKS,
    );
    assert.ok(
      lines.every((line) => line.startsWith('ok  ')),
      stdout,
    );
    assert.match(lineOf(stdout, 'server').line, /answers: svc-server \d+\.\d+\.\d+ \(\d+ ms\)$/);
    assert.match(lineOf(stdout, 'token').line, /valid: local@\S+, plan free \(\d+ of 10 tunnels in use\)$/);
    assert.match(lineOf(stdout, 'upload').line, /2 MiB in [\d.]+ s \([\d.]+ MiB\/s\), sha256 [0-9a-f]{12}… matches$/);
    assert.match(lineOf(stdout, 'offline').line, /404 "This tunnel is offline"/);
    assert.match(stdout, /^all 12 checks passed$/m);
  });

  it('--json prints one object with every check and its figures', async () => {
    const { code, stdout } = await doctor(server, {}, ['--json']);
    assert.equal(code, 0, stdout);
    const report = JSON.parse(stdout);
    assert.equal(report.ok, true);
    assert.equal(report.server, server.url);
    assert.deepEqual(
      report.checks.map((check: { name: string; status: string }) => [check.name, check.status]),
      CHECKS.map((name) => [name, 'pass']),
    );
    const byName = Object.fromEntries(report.checks.map((check: { name: string }) => [check.name, check]));
    assert.equal(byName.upload.data.bytes, 2 * 1024 * 1024);
    assert.match(byName.download.data.sha256, /^[0-9a-f]{64}$/);
    assert.equal(typeof byName.sse.data.firstEventMs, 'number');
    assert.ok(Math.abs(byName.clock.data.offsetMs) < 30_000);
  });

  it('an edge whose TLS is not trusted here: the tls check fails with the SVC_CA_FILE hint, exit 1', async () => {
    const { code, stdout } = await doctor(server, { SVC_CA_FILE: undefined });
    assert.equal(code, 1, stdout);
    const tls = lineOf(stdout, 'tls');
    assert.match(tls.line, /^FAIL  tls +\S+ does not verify: [A-Z_]+: .*certificate/);
    assert.match(tls.hint ?? '', /SVC_CA_FILE/);
    assert.match(lineOf(stdout, 'http1').line, /^skip  http1 +skipped: TLS to the edge does not verify$/);
    assert.match(lineOf(stdout, 'tunnel').line, /^ok  /, 'the session itself runs over plain HTTP here');
  });

  it('a revoked token: the token check fails with its hint, exit 1', async () => {
    const created = await api(server, 'POST', '/v1/keys', { token: server.token }, { description: 'doctor' });
    const key = created.body as { id: string; token: string };
    assert.equal((await api(server, 'DELETE', `/v1/keys/${key.id}`, { token: server.token })).status < 300, true);
    const { code, stdout } = await doctor(server, { SVC_TOKEN: key.token });
    assert.equal(code, 1, stdout);
    const token = lineOf(stdout, 'token');
    assert.match(token.line, /^FAIL  token +invalid or missing svcRouter token \(the server answered 401\)$/);
    assert.match(token.hint ?? '', /set SVC_TOKEN to an agent token/);
    assert.match(lineOf(stdout, 'server').line, /^ok  /);
    assert.match(lineOf(stdout, 'tunnel').line, /^skip  tunnel +skipped: the token is not valid$/);
  });

  describe('behind a proxy that refuses WebSocket upgrades', () => {
    let proxy: UpgradeCuttingProxy;
    let cut: TestServer;
    before(async () => {
      let dataDir = '';
      proxy = await startUpgradeCuttingProxy(() => `${dataDir}/dev-ca`);
      cut = await startServer({ env: { SVC_PUBLIC_HTTPS_PORT: String(proxy.port) } });
      dataDir = cut.dataDir;
      proxy.forwardTo(cut.httpsPort, cut.caPem);
    });
    after(async () => {
      await proxy?.close();
      await cut?.close();
    });

    it('the websocket check fails with its hint, the others pass, exit 1', async () => {
      const { code, stdout } = await doctor(cut);
      assert.equal(code, 1, stdout);
      const ws = lineOf(stdout, 'websocket');
      assert.match(ws.line, /^FAIL  websocket +the upgrade was answered 403 instead of 101$/);
      assert.match(ws.hint ?? '', /refuses WebSocket upgrades/);
      assert.ok(proxy.refused >= 1);
      for (const name of CHECKS.filter((check) => check !== 'websocket')) assert.match(lineOf(stdout, name).line, /^ok  /, name);
    });
  });
});
