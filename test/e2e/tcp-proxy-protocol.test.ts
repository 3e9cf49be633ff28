import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { forward } from '@svcrouter/sdk';
import { freePort, pollUntil } from '@svcrouter/testkit';
import { startServer, tempDir, type TestServer } from './harness/index.js';
import { portOf, tcpPortRange } from './harness/tcp-support.js';

// --proxy-protocol against a real nginx with `listen … proxy_protocol`: nginx answers with the
// address the PROXY header gave it, which must be the visitor's as the edge saw it, not the
// agent's loopback connection. Debian package nginx-light (in .ci/run).

const NGINX = '/usr/sbin/nginx';

describe('PROXY protocol to a real nginx', () => {
  if (!existsSync(NGINX)) {
    const notice = 'skipping the PROXY protocol suite: nginx missing (apt-get install -y nginx-light)';
    if (process.env.CI === 'true') it('proxy protocol suite', () => assert.fail(notice));
    else {
      process.stderr.write(`${notice}\n`);
      it('proxy protocol suite', { skip: notice }, () => {});
    }
    return;
  }
  let server: TestServer;
  let nginx: ChildProcess;
  let dir: { dir: string; remove(): Promise<void> };
  let nginxPort: number;
  before(async () => {
    dir = await tempDir('svc-nginx-');
    await mkdir(path.join(dir.dir, 'logs'), { recursive: true });
    nginxPort = await freePort();
    const conf = `
worker_processes 1;
pid ${dir.dir}/nginx.pid;
error_log ${dir.dir}/logs/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir.dir}/body;
  proxy_temp_path ${dir.dir}/proxy;
  fastcgi_temp_path ${dir.dir}/fastcgi;
  uwsgi_temp_path ${dir.dir}/uwsgi;
  scgi_temp_path ${dir.dir}/scgi;
  server {
    listen 127.0.0.1:${nginxPort} proxy_protocol;
    location / { default_type text/plain; return 200 "visitor $proxy_protocol_addr:$proxy_protocol_port"; }
  }
}
`;
    await writeFile(path.join(dir.dir, 'nginx.conf'), conf);
    nginx = spawn(NGINX, ['-p', dir.dir, '-c', path.join(dir.dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'ignore' });
    await pollUntil('nginx listening', () => canConnect(nginxPort));
    server = await startServer({ env: { SVC_TCP_PORTS: await tcpPortRange(100) } });
  });
  after(async () => {
    nginx?.kill('SIGTERM');
    await server?.close();
    await dir?.remove();
  });

  for (const version of ['v1', 'v2'] as const) {
    it(`nginx reads the visitor's address from a PROXY protocol ${version} header`, async () => {
      const tunnel = await forward({ proto: 'tcp', addr: nginxPort, token: server.token!, serverUrl: server.url, proxyProtocol: version });
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

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}
