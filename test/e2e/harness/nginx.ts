import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { freePort, pollUntil } from '@svcrouter/testkit';
import { tempDir } from './index.js';

// A real nginx as the local service behind a tunnel, in a temp prefix of its own: the PROXY
// protocol suites check that nginx reads the visitor's address, as an operator's would.
// Debian package nginx-light (in .ci/run).

export const NGINX = '/usr/sbin/nginx';

export const nginxInstalled = (): boolean => existsSync(NGINX);

export interface TestNginx {
  port: number;
  close(): Promise<void>;
}

/**
 * Starts nginx with one server on a free loopback port. `listen` is what follows the address on the
 * listen line (`proxy_protocol`, `ssl proxy_protocol`); `server` holds the rest of the server block.
 */
export async function startNginx(listen: string, server: string): Promise<TestNginx> {
  const dir = await tempDir('svc-nginx-');
  await mkdir(path.join(dir.dir, 'logs'), { recursive: true });
  const port = await freePort();
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
    listen 127.0.0.1:${port} ${listen};
    ${server}
  }
}
`;
  await writeFile(path.join(dir.dir, 'nginx.conf'), conf);
  const nginx = spawn(NGINX, ['-p', dir.dir, '-c', path.join(dir.dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => nginx.once('exit', () => resolve()));
  await pollUntil('nginx listening', () => canConnect(port));
  return {
    port,
    close: async () => {
      if (nginx.exitCode === null && nginx.signalCode === null) {
        nginx.kill('SIGTERM');
        await exited;
      }
      await dir.remove();
    },
  };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}
