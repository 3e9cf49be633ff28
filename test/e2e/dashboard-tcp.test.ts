import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { forward, type Tunnel } from '@svcrouter/sdk';
import { captureViewports, launchChromium, requireChromium, VIEWPORTS } from './harness/browser.js';
import { startServer, type TestServer } from './harness/index.js';
import { createTokenInUi, openPage, readClipboard, rowWith, signUp, watchPageErrors } from './harness/dashboard-support.js';
import { connectTcp, readAll, startTcpService, tcpPortRange, type TcpService } from './harness/tcp-support.js';

// The dashboard's view of TCP and TLS tunnels in Chromium: each listed with its tcp:// or
// tls:// address and a button that copies it, a Stop that says what visitors then meet (there
// is no page to show them), and a TCP connection's record on the Traffic page.

if (requireChromium('dashboard tcp and tls')) {
  describe('dashboard: TCP and TLS tunnels in Chromium', () => {
    let server: TestServer;
    let echo: TcpService;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let pageErrors: string[];
    let tcp: Tunnel;
    let tls: Tunnel;

    before(async () => {
      server = await startServer({ env: { SVC_TCP_PORTS: await tcpPortRange(10) } });
      echo = await startTcpService();
      browser = await launchChromium();
      context = await browser.newContext({ baseURL: server.url, viewport: VIEWPORTS.desktop });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
      page = await context.newPage();
      pageErrors = watchPageErrors(page);
      await signUp(page, `tcp-${randomBytes(4).toString('hex')}@example.com`, 'tcp-dashboard-password-1');
      const token = await createTokenInUi(page, 'tcp laptop');
      tcp = await forward({ proto: 'tcp', addr: echo.port, token, serverUrl: server.url });
      // The edge never connects to a TLS tunnel's service on its own: the echo service stands in.
      tls = await forward({
        proto: 'tls',
        addr: echo.port,
        subdomain: `db-${randomBytes(3).toString('hex')}`,
        token,
        serverUrl: server.url,
      });
    });
    after(async () => {
      await tcp?.close();
      await tls?.close();
      await browser?.close();
      await echo?.close();
      await server?.close();
    });

    it('lists both with their addresses, each with a button that copies it', async () => {
      await openPage(page, 'Tunnels');
      const tcpRow = rowWith(page, tcp.url);
      await tcpRow.getByText('online').waitFor();
      assert.match((await tcpRow.textContent()) ?? '', new RegExp(`localhost:${echo.port}`));
      await tcpRow.getByRole('button', { name: 'Copy TCP address' }).click();
      await page.getByRole('status').filter({ hasText: 'Copied' }).first().waitFor();
      assert.equal(await readClipboard(page), tcp.url);
      assert.match(tls.url, /^tls:\/\//);
      const tlsRow = rowWith(page, tls.url);
      await tlsRow.getByText('online').waitFor();
      await tlsRow.getByRole('button', { name: 'Copy TLS address' }).click();
      assert.equal(await readClipboard(page), tls.url);
      await captureViewports(page, 'tunnels-tcp-tls');
      // On a phone the address and its button wrap as one item; squeezed apart, the button's
      // word broke letter by letter, leaving it taller than wide.
      await page.setViewportSize(VIEWPORTS.phone);
      for (const what of ['TCP address', 'TLS address']) {
        const box = await page.getByRole('button', { name: `Copy ${what}` }).boundingBox();
        assert.ok(box !== null && box.width > box.height, `Copy ${what} at phone width: ${JSON.stringify(box)}`);
      }
      await page.setViewportSize(VIEWPORTS.desktop);
    });

    it('asks before stopping a TCP tunnel with what its visitors then meet, not an offline page', async () => {
      const tcpRow = rowWith(page, tcp.url);
      await tcpRow.getByRole('button', { name: 'Stop', exact: true }).click();
      const question = page.getByText(`Stop the tunnel ${tcp.url}?`);
      await question.waitFor();
      assert.match((await question.textContent()) ?? '', /the port stops accepting connections\.$/);
      await page.getByRole('button', { name: 'Cancel', exact: true }).click();
      await question.waitFor({ state: 'hidden' });
      await rowWith(page, tls.url).getByRole('button', { name: 'Stop', exact: true }).click();
      const tlsQuestion = page.getByText(`Stop the tunnel ${tls.url}?`);
      assert.match((await tlsQuestion.textContent()) ?? '', /new ones are no longer passed through\.$/);
      await page.getByRole('button', { name: 'Cancel', exact: true }).click();
      await tlsQuestion.waitFor({ state: 'hidden' });
    });

    it('shows a TCP connection on the Traffic page once it has closed', async () => {
      const socket = await connectTcp(Number(new URL(tcp.url).port));
      const answer = readAll(socket);
      socket.end('hello');
      assert.equal((await answer).toString(), 'hello');
      await openPage(page, 'Traffic');
      const record = page
        .getByRole('row')
        .filter({ hasText: 'TCP' })
        .filter({ hasText: new URL(tcp.url).host });
      await record.first().waitFor();
      const text = (await record.first().textContent()) ?? '';
      assert.match(text, /200/);
      assert.match(text, /tcp/);
      assert.deepEqual(pageErrors, []);
    });
  });
}
