import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createServer, type ViteDevServer } from 'vite';
import type { Browser } from 'playwright-core';
import { launchChromiumFor, requireChromium } from './harness/browser.js';
import { edgeUrl, runAgent, splitFailure, startAgent, startServer, tempDir, visit, type TestServer } from './harness/index.js';

const SHARED_DOMAIN = 'svc-tunnels.test';

// `--host-header rewrite` exists for dev servers that refuse a foreign Host: Vite is the real one.
describe('--host-header', () => {
  let server: TestServer;
  let temp: Awaited<ReturnType<typeof tempDir>>;

  before(async () => {
    // Vite trusts `*.localhost` on its own, so the tunnels live under a name it does not know.
    const started = await startServer({ env: { SVC_SHARED_DOMAIN: SHARED_DOMAIN } });
    // Agents dial the apex; an IP address is the apex whatever the shared domain.
    server = { ...started, url: `http://127.0.0.1:${started.httpPort}` };
    temp = await tempDir('svc-host-header-');
  });
  after(async () => {
    await server?.close();
    await temp?.remove();
  });

  describe('against a plain origin', () => {
    let origin: http.Server;
    let port = 0;
    const seen: http.IncomingHttpHeaders[] = [];

    before(async () => {
      origin = http.createServer((request, response) => {
        seen.push(request.headers);
        if (request.url === '/login') {
          response.writeHead(302, { location: `http://localhost:${port}/home?from=login` }).end();
        } else if (request.url === '/elsewhere') {
          response.writeHead(302, { location: 'https://example.test/x' }).end();
        } else response.end('ok');
      });
      await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
      port = (origin.address() as AddressInfo).port;
    });
    after(() => new Promise<void>((resolve) => origin.close(() => resolve())));

    it('rewrite sends the local host as Host and keeps the public one in X-Forwarded-Host', async () => {
      const agent = await startAgent(server, { token: server.token, target: port, args: ['--host-header', 'rewrite'] });
      try {
        assert.equal((await visit(server, agent.hostname, '/')).text, 'ok');
        const headers = seen.at(-1)!;
        assert.equal(headers.host, `localhost:${port}`);
        assert.equal(headers['x-forwarded-host'], `${agent.hostname}:${server.httpPort}`);
      } finally {
        await agent.close();
      }
    });

    it('a redirect to the local target points at the public URL; a foreign one is left alone', async () => {
      const agent = await startAgent(server, { token: server.token, target: port, args: ['--host-header', 'rewrite'] });
      try {
        const login = await visit(server, agent.hostname, '/login', { secure: true });
        assert.equal(login.status, 302);
        assert.equal(login.headers.location, `https://${agent.hostname}:${server.httpsPort}/home?from=login`);
        assert.equal((await visit(server, agent.hostname, '/elsewhere')).headers.location, 'https://example.test/x');
      } finally {
        await agent.close();
      }
    });

    it('SVC_HOST_HEADER is the default of --host-header; the flag wins; a bad value is a usage error', async () => {
      const fromEnv = await startAgent(server, { token: server.token, target: port, env: { SVC_HOST_HEADER: 'rewrite' } });
      try {
        await visit(server, fromEnv.hostname, '/');
        assert.equal(seen.at(-1)!.host, `localhost:${port}`);
      } finally {
        await fromEnv.close();
      }
      const flagWins = await startAgent(server, {
        token: server.token,
        target: port,
        env: { SVC_HOST_HEADER: 'rewrite' },
        args: ['--host-header', 'from.flag'],
      });
      try {
        await visit(server, flagWins.hostname, '/');
        assert.equal(seen.at(-1)!.host, 'from.flag');
      } finally {
        await flagWins.close();
      }
      const refused = await runAgent(['http', String(port)], { SVC_SERVER: server.url, SVC_TOKEN: server.token!, SVC_HOST_HEADER: 'a b' });
      assert.equal(refused.code, 2);
      assert.equal(refused.stdout, '');
      assert.deepEqual(splitFailure(refused.stderr), {
        sentence: 'SVC_HOST_HEADER: invalid host header "a b": expected "rewrite" or a host name, optionally with :port',
        hint: 'set it to rewrite or a host such as localhost:5173, or unset it',
      });
    });

    it('a given value is sent as Host; without the flag the public Host reaches the origin and Location is untouched', async () => {
      const pinned = await startAgent(server, { token: server.token, target: port, args: ['--host-header', 'app.internal'] });
      try {
        await visit(server, pinned.hostname, '/');
        assert.equal(seen.at(-1)!.host, 'app.internal');
      } finally {
        await pinned.close();
      }
      const plain = await startAgent(server, { token: server.token, target: port });
      try {
        const login = await visit(server, plain.hostname, '/login');
        assert.equal(seen.at(-1)!.host, `${plain.hostname}:${server.httpPort}`);
        assert.equal(login.headers.location, `http://localhost:${port}/home?from=login`);
      } finally {
        await plain.close();
      }
    });
  });

  describe('a Vite dev server', () => {
    let vite: ViteDevServer;
    let port = 0;

    before(async () => {
      await writeFile(
        path.join(temp.dir, 'index.html'),
        '<!doctype html><title>vite app</title><div id="app"></div><script type="module" src="/main.js"></script>\n',
      );
      await writeFile(path.join(temp.dir, 'main.js'), "document.querySelector('#app').textContent = 'rendered by vite';\n");
      vite = await createServer({
        root: temp.dir,
        configFile: false,
        logLevel: 'silent',
        server: { host: '127.0.0.1', port: 0, strictPort: false },
      });
      await vite.listen();
      port = (vite.httpServer!.address() as AddressInfo).port;
    });
    after(async () => {
      await vite?.close();
    });

    it('without --host-header, Vite refuses the public Host with 403', async () => {
      const agent = await startAgent(server, { token: server.token, target: `127.0.0.1:${port}` });
      try {
        const page = await visit(server, agent.hostname, '/');
        assert.equal(page.status, 403);
        assert.match(page.text, /Blocked request. This host .* is not allowed/);
      } finally {
        await agent.close();
      }
    });

    if (requireChromium('Vite behind --host-header rewrite in Chromium')) {
      describe('in Chromium', () => {
        let browser: Browser;
        before(async () => {
          browser = await launchChromiumFor(SHARED_DOMAIN);
        });
        after(async () => {
          await browser?.close();
        });

        it('with --host-header rewrite the app loads through the tunnel and its HMR WebSocket connects', async () => {
          const agent = await startAgent(server, { token: server.token, target: `127.0.0.1:${port}`, args: ['--host-header', 'rewrite'] });
          const context = await browser.newContext({ ignoreHTTPSErrors: true });
          try {
            const page = await context.newPage();
            const hmrConnected = page.waitForEvent('console', { predicate: (message) => message.text().includes('[vite] connected') });
            const socket = page.waitForEvent('websocket');
            await page.goto(edgeUrl(server, agent.hostname, '/', true));
            await page.locator('#app', { hasText: 'rendered by vite' }).waitFor();
            assert.match((await socket).url(), new RegExp(`^wss://${agent.hostname.replace(/\./g, '\\.')}:${server.httpsPort}/`));
            await hmrConnected;
          } finally {
            await context.close();
            await agent.close();
          }
        });
      });
    }
  });
});
