import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { captureViewports, launchChromium, requireChromium, VIEWPORTS } from './harness/browser.js';
import { startAgent, startOrigin, startServer, visit, type TestServer } from './harness/index.js';
import { assertNotReloaded, createTokenInUi, heading, markDocument, openPage, rowWith } from './harness/dashboard-support.js';

// The first start's one-time link signs the local account in (set a password at /welcome),
// and an open dashboard rides out a server restart: it says it is reconnecting, then carries on.

const LOCAL_EMAIL = 'local@svcrouter.localhost';

if (requireChromium('dashboard first start and restart')) {
  describe('dashboard first-start link and server restart in Chromium', () => {
    let first: TestServer;
    let server: TestServer;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let link: string;

    before(async () => {
      first = server = await startServer();
      link = (await server.proc.waitForLine(/^\s+(http:\/\/\S+\/welcome#token=svl_[A-Za-z0-9_-]+)$/))[1]!;
      browser = await launchChromium();
      context = await browser.newContext({ viewport: VIEWPORTS.desktop });
      page = await context.newPage();
    });
    after(async () => {
      await browser?.close();
      await server?.close({ keepData: true });
      await first?.close();
    });

    it('the link printed at first start leads to "Set your password" and signs the local account in', async () => {
      assert.equal(new URL(link).origin, server.url, 'the link points at this server');
      await page.goto(link);
      await heading(page, 'Set your password').waitFor();
      assert.equal(new URL(page.url()).hash, '', 'the one-time token leaves the address bar');
      await captureViewports(page, 'welcome');
      await page.getByLabel('Password', { exact: true }).fill('local-password-1');
      await page.getByRole('button', { name: 'Set password', exact: true }).click();
      await heading(page, 'Overview').waitFor();
      await page.getByText(LOCAL_EMAIL).waitFor();
    });

    it("the link works once: a second use shows the server's message", async () => {
      const other = await browser.newContext();
      const second = await other.newPage();
      await second.goto(link);
      await second.getByLabel('Password', { exact: true }).fill('another-password-1');
      await second.getByRole('button', { name: 'Set password', exact: true }).click();
      await second.getByRole('alert').filter({ hasText: 'this sign-in link is invalid or has expired' }).waitFor();
      await other.close();
    });

    it('shows "reconnecting" while the server restarts, then recovers without a reload', async () => {
      await openPage(page, 'Tunnels');
      await markDocument(page);
      await server.close({ keepData: true });
      const banner = page.getByRole('status').filter({ hasText: 'reconnecting' });
      await banner.waitFor();
      await captureViewports(page, 'reconnecting');
      server = await startServer({ dataDir: first.dataDir, httpPort: first.httpPort, httpsPort: first.httpsPort });
      await banner.waitFor({ state: 'hidden' });
      await assertNotReloaded(page);
      await page.getByText('No tunnels yet').waitFor();
      // The session lives in the store: a state-changing call (cookie + CSRF) still works.
      const token = await createTokenInUi(page, 'after restart');
      assert.match(token, /^svc_/);
    });

    it('the live Traffic table follows again after a restart: new requests appear without a reload', async () => {
      const origin = await startOrigin();
      const agent = await startAgent(server, { token: first.token, target: origin.port, subdomain: 'restart-check' });
      try {
        await openPage(page, 'Traffic');
        await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
        await markDocument(page);
        await server.close({ keepData: true });
        await page.getByRole('status').filter({ hasText: 'reconnecting' }).first().waitFor();
        server = await startServer({ dataDir: first.dataDir, httpPort: first.httpPort, httpsPort: first.httpsPort });
        // The agent dials back by itself; a request through it must reach the open table.
        await agent.proc.waitForLine(/^Reconnected: forwarding /);
        assert.equal((await visit(server, agent.hostname, '/echo?after=restart')).status, 200);
        await rowWith(page, '/echo?after=restart').first().waitFor();
        await assertNotReloaded(page);
      } finally {
        await agent.close();
        await origin.close();
      }
    });
  });
}
