import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { createServer, type ViteDevServer } from 'vite';
import { launchChromiumFor, requireChromium } from './harness/browser.js';
import { edgeUrl, startAgent, startServer, tempDir, type TestServer } from './harness/index.js';

const SHARED_DOMAIN = 'svc-routes.test';

// The case routes exist for: a frontend dev server and an API on two local ports behind one
// public hostname, so the page calls `/api` on its own origin (no CORS) and Vite's HMR socket
// still reaches Vite.
describe('routes with a Vite dev server and an API on another port', () => {
  let server: TestServer;
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let vite: ViteDevServer;
  let vitePort = 0;
  let apiServer: http.Server;
  let apiPort = 0;
  const apiHosts: Array<string | undefined> = [];

  before(async () => {
    // Vite trusts `*.localhost` on its own, so the tunnels live under a name it does not know.
    const started = await startServer({ env: { SVC_SHARED_DOMAIN: SHARED_DOMAIN } });
    server = { ...started, url: `http://127.0.0.1:${started.httpPort}` };
    temp = await tempDir('svc-routes-vite-');
    await writeFile(
      path.join(temp.dir, 'index.html'),
      '<!doctype html><title>routes</title><div id="app"></div><div id="api"></div><script type="module" src="/main.js"></script>\n',
    );
    await writeFile(
      path.join(temp.dir, 'main.js'),
      [
        "document.querySelector('#app').textContent = 'rendered by vite';",
        "const answer = await fetch('/api/hello').then((response) => response.json());",
        "document.querySelector('#api').textContent = `api says ${answer.message}`;",
        '',
      ].join('\n'),
    );
    vite = await createServer({
      root: temp.dir,
      configFile: false,
      logLevel: 'silent',
      server: { host: '127.0.0.1', port: 0, strictPort: false },
    });
    await vite.listen();
    vitePort = (vite.httpServer!.address() as AddressInfo).port;
    apiServer = http.createServer((request, response) => {
      apiHosts.push(request.headers.host);
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ message: 'hello', path: request.url }));
    });
    await new Promise<void>((resolve) => apiServer.listen(0, '127.0.0.1', resolve));
    apiPort = (apiServer.address() as AddressInfo).port;
  });
  after(async () => {
    await vite?.close();
    await new Promise<void>((resolve) => (apiServer ? apiServer.close(() => resolve()) : resolve()));
    await server?.close();
    await temp?.remove();
  });

  if (requireChromium('routes with Vite and an API in Chromium')) {
    describe('in Chromium', () => {
      let browser: Browser;
      before(async () => {
        browser = await launchChromiumFor(SHARED_DOMAIN);
      });
      after(async () => {
        await browser?.close();
      });

      it('the page loads from Vite, its /api call reaches the API, and the HMR WebSocket connects to Vite', async () => {
        const agent = await startAgent(server, {
          token: server.token,
          target: `127.0.0.1:${vitePort}`,
          args: ['--host-header', 'rewrite', '--route', `/api=127.0.0.1:${apiPort}`],
        });
        const context = await browser.newContext({ ignoreHTTPSErrors: true });
        try {
          const page = await context.newPage();
          const hmrConnected = page.waitForEvent('console', { predicate: (message) => message.text().includes('[vite] connected') });
          const socket = page.waitForEvent('websocket');
          await page.goto(edgeUrl(server, agent.hostname, '/', true));
          await page.locator('#app', { hasText: 'rendered by vite' }).waitFor();
          await page.locator('#api', { hasText: 'api says hello' }).waitFor();
          assert.match((await socket).url(), new RegExp(`^wss://${agent.hostname.replace(/\./g, '\\.')}:${server.httpsPort}/`));
          await hmrConnected;
          // The API route keeps the public Host (only the main target rewrites it).
          assert.equal(apiHosts.at(-1), `${agent.hostname}:${server.httpsPort}`);
        } finally {
          await context.close();
          await agent.close();
        }
      });
    });
  }
});
