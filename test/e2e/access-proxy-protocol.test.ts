import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { requireTools } from '@svcrouter/testkit/tools';
import { api, startAgent, startOrigin, startServer, tempDir, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { eventually } from './harness/api-helpers.js';
import { visitFrom } from './harness/access-support.js';

/** A port free right now on `host` (HAProxy cannot report the port it bound). */
async function freePort(host: string): Promise<number> {
  const server = net.createServer().listen(0, host);
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// SVC_TRUSTED_PROXIES with a real HAProxy in TCP mode in front of the edge, as docs/deploy.md's
// recipe runs it: send-proxy-v2 to the HTTP port, send-proxy (v1) to the HTTPS port. The visitor's
// own address (127.0.0.5, ::1) reaches the IP rules, X-Forwarded-For and the inspector.
if (requireTools('PROXY protocol behind HAProxy', ['haproxy'], 'haproxy')) {
  describe('visitor addresses through HAProxy (PROXY protocol v1 and v2)', () => {
    let server: TestServer;
    let origin: TestOrigin;
    let agent: TestAgent;
    let haproxyPid: number | undefined;
    let plain4: number;
    let plain6: number;
    let secure4: number;

    before(async () => {
      server = await startServer({ env: { SVC_TRUSTED_PROXIES: '127.0.0.1/32' } });
      origin = await startOrigin();
      agent = await startAgent(server, {
        token: server.token,
        target: origin.port,
        args: ['--cidr-allow', '127.0.0.5', '--cidr-allow', '::1'],
      });
      [plain4, plain6, secure4] = [await freePort('127.0.0.1'), await freePort('::1'), await freePort('127.0.0.1')];
      const dir = await tempDir('svc-haproxy-');
      const config = path.join(dir.dir, 'haproxy.cfg');
      await writeFile(
        config,
        [
          'global',
          '  log stderr format raw local0 err',
          'defaults',
          '  mode tcp',
          '  timeout connect 5s',
          '  timeout client 30s',
          '  timeout server 30s',
          'frontend plain',
          `  bind 127.0.0.1:${plain4}`,
          `  bind ::1:${plain6}`,
          '  default_backend edge_plain',
          'backend edge_plain',
          `  server edge 127.0.0.1:${server.httpPort} send-proxy-v2`,
          'frontend secure',
          `  bind 127.0.0.1:${secure4}`,
          '  default_backend edge_tls',
          'backend edge_tls',
          `  server edge 127.0.0.1:${server.httpsPort} send-proxy`,
          '',
        ].join('\n'),
      );
      // Started as a daemon: its parent exits once the listeners are bound, so the exit is the readiness event.
      const pidFile = path.join(dir.dir, 'haproxy.pid');
      await promisify(execFile)('haproxy', ['-f', config, '-D', '-p', pidFile]);
      haproxyPid = Number((await readFile(pidFile, 'utf8')).trim());
    });
    after(async () => {
      if (haproxyPid !== undefined) process.kill(haproxyPid, 'SIGTERM');
      await agent?.close();
      await origin?.close();
      await server?.close();
    });

    it('v2 over HTTP: the visitor address passes the allow list and is appended to X-Forwarded-For', async () => {
      const answer = await visitFrom({ httpPort: plain4 }, agent.hostname, '/echo', { from: '127.0.0.5' });
      assert.equal(answer.status, 200);
      const echo = JSON.parse(answer.text) as { headers: Record<string, string> };
      assert.equal(echo.headers['x-forwarded-for'], '127.0.0.5');
      // HAProxy's own address (127.0.0.1) is not on the allow list: a visitor it names from elsewhere is refused.
      assert.equal((await visitFrom({ httpPort: plain4 }, agent.hostname, '/echo', { from: '127.0.0.6' })).status, 403);
    });

    it('v2 carries IPv6 visitors', async () => {
      const answer = await visitFrom({ httpPort: plain6 }, agent.hostname, '/echo', { from: '::1', connectTo: '::1' });
      assert.equal(answer.status, 200);
      assert.equal((JSON.parse(answer.text) as { headers: Record<string, string> }).headers['x-forwarded-for'], '::1');
    });

    it('v1 over HTTPS: the header is read before the TLS handshake', async () => {
      const status = await new Promise<string>((resolve, reject) => {
        const socket = tls.connect(
          {
            socket: net.connect({ host: '127.0.0.1', port: secure4, localAddress: '127.0.0.5' }),
            servername: agent.hostname,
            ca: server.caPem,
            ALPNProtocols: ['http/1.1'],
          },
          () => socket.write(`GET /echo HTTP/1.1\r\nhost: ${agent.hostname}\r\nconnection: close\r\n\r\n`),
        );
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (text += chunk));
        socket.on('end', () => resolve(text.split('\r\n')[0]!));
        socket.on('error', reject);
      });
      assert.equal(status, 'HTTP/1.1 200 OK');
    });

    it('records the visitor address in the Traffic Inspector', async () => {
      const page = await eventually(
        () => api(server, 'GET', '/v1/requests?limit=100', { token: server.token }),
        (r) =>
          (r.body as { requests: Array<{ ip: string; status: number }> }).requests.some((x) => x.ip === '127.0.0.6' && x.status === 403),
        'proxied requests captured',
      );
      const records = (page.body as { requests: Array<{ ip: string; status: number }> }).requests;
      assert.ok(records.some((x) => x.ip === '127.0.0.5' && x.status === 200));
      assert.ok(records.every((x) => x.ip !== '127.0.0.1' || x.status !== 200));
    });

    it('closes a connection with a malformed PROXY header from a trusted address', async () => {
      const socket = net.connect({ host: '127.0.0.1', port: server.httpPort });
      await once(socket, 'connect');
      socket.end('PROXY TCP4 not-an-address 10.0.0.1 1 2\r\nGET / HTTP/1.1\r\n\r\n');
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
      await once(socket, 'close');
      assert.equal(received, '');
    });

    it('never takes a PROXY header from an address that is not trusted: the connection closes, the address is not used', async () => {
      const socket = net.connect({ host: '127.0.0.1', port: server.httpPort, localAddress: '127.0.0.2' });
      await once(socket, 'connect');
      socket.write(`PROXY TCP4 127.0.0.5 127.0.0.1 1234 80\r\nGET /echo HTTP/1.1\r\nhost: ${agent.hostname}\r\n\r\n`);
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
      await once(socket, 'close');
      assert.doesNotMatch(received, /^HTTP\/1\.1 200/);
    });
  });
}
