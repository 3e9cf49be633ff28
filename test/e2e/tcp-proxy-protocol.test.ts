import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { forward } from '@svcrouter/sdk';
import { startServer, type TestServer } from './harness/index.js';
import { nginxInstalled, startNginx, type TestNginx } from './harness/nginx.js';
import { portOf, tcpPortRange } from './harness/tcp-support.js';

// --proxy-protocol against a real nginx with `listen … proxy_protocol`: nginx answers with the
// address the PROXY header gave it, which must be the visitor's as the edge saw it, not the
// agent's loopback connection. Debian package nginx-light (in .ci/run).

describe('PROXY protocol to a real nginx', () => {
  if (!nginxInstalled()) {
    const notice = 'skipping the PROXY protocol suite: nginx missing (apt-get install -y nginx-light)';
    if (process.env.CI === 'true') it('proxy protocol suite', () => assert.fail(notice));
    else {
      process.stderr.write(`${notice}\n`);
      it('proxy protocol suite', { skip: notice }, () => {});
    }
    return;
  }
  let server: TestServer;
  let nginx: TestNginx;
  before(async () => {
    nginx = await startNginx(
      'proxy_protocol',
      'location / { default_type text/plain; return 200 "visitor $proxy_protocol_addr:$proxy_protocol_port"; }',
    );
    server = await startServer({ env: { SVC_TCP_PORTS: await tcpPortRange(100) } });
  });
  after(async () => {
    await nginx?.close();
    await server?.close();
  });

  for (const version of ['v1', 'v2'] as const) {
    it(`nginx reads the visitor's address from a PROXY protocol ${version} header`, async () => {
      const tunnel = await forward({ proto: 'tcp', addr: nginx.port, token: server.token!, serverUrl: server.url, proxyProtocol: version });
      try {
        const socket = net.connect({ host: '127.0.0.1', port: portOf(tunnel.url) });
        await new Promise((resolve) => socket.once('connect', resolve));
        const chunks: Buffer[] = [];
        socket.on('data', (c: Buffer) => chunks.push(c));
        const ended = new Promise((resolve) => socket.once('end', resolve));
        socket.write('GET / HTTP/1.0\r\nHost: x\r\n\r\n');
        await ended;
        const body = Buffer.concat(chunks).toString().split('\r\n\r\n')[1];
        assert.equal(body, `visitor 127.0.0.1:${socket.localPort}`);
        socket.destroy();
      } finally {
        await tunnel.close();
      }
    });
  }
});
