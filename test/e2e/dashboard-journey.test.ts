import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { captureViewports, launchChromium, requireChromium, VIEWPORTS } from './harness/browser.js';
import { startAgent, startOrigin, visit, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { freshHost, startDomainWorld, type DomainWorld } from './harness/domains-support.js';
import {
  apiGet,
  assertNotReloaded,
  csrfToken,
  expectEmptyStates,
  fillSignIn,
  heading,
  markDocument,
  openPage,
  readClipboard,
  rowWith,
  sessionCookie,
  signUp,
  watchPageErrors,
} from './harness/dashboard-support.js';

// The dashboard's whole journey in Chromium against a real svc-server, real `svc` agents and
// a real local service: sign up, empty states, a token read once, a tunnel appearing live,
// live traffic and its details, Stop, a custom domain, Revoke, Sign out. Each step leaves
// screenshots in test-artifacts/dashboard at desktop and phone widths.

if (requireChromium('dashboard journey', ['pebble-challtestsrv'], 'pebble')) {
  describe('dashboard journey in Chromium', () => {
    const email = `journey-${randomBytes(4).toString('hex')}@example.com`;
    const password = 'journey-password-1';
    const newPassword = 'journey-password-2';
    let world: DomainWorld;
    let server: TestServer;
    let origin: TestOrigin;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let pageErrors: string[];
    let token: string;
    let agent: TestAgent;

    before(async () => {
      world = await startDomainWorld({ acme: false, env: { SVC_USAGE_FLUSH_MS: '200' } });
      server = world.server;
      origin = await startOrigin();
      browser = await launchChromium();
      context = await browser.newContext({ baseURL: server.url, viewport: VIEWPORTS.desktop });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
      page = await context.newPage();
      pageErrors = watchPageErrors(page);
    });
    after(async () => {
      await agent?.proc.kill('SIGKILL');
      await browser?.close();
      await origin?.close();
      await world?.close();
    });

    it('1. signs up with an email and a password and lands on the Overview', async () => {
      await page.goto('/signup');
      await captureViewports(page, 'sign-up');
      await signUp(page, email, password);
      assert.equal(new URL(page.url()).pathname, '/');
      await page.getByText(`SVC_SERVER=${server.url}`).waitFor();
      const tunnels = page.getByRole('meter', { name: 'Tunnels' });
      await tunnels.waitFor();
      assert.match((await tunnels.getAttribute('aria-valuetext')) ?? '', /^0 \/ \d+$/);
      assert.match((await page.getByRole('meter', { name: 'Transfer this month' }).getAttribute('aria-valuetext')) ?? '', / of 50 GB$/);
      await captureViewports(page, 'overview');
    });

    it('2. shows a readable empty state on Tunnels, Traffic, Domains and Tokens', async () => {
      await expectEmptyStates(page, (title) => captureViewports(page, `${title.toLowerCase()}-empty`));
    });

    it('3. creates a token and shows its secret once, with a copy button', async () => {
      await page.getByLabel('Description', { exact: true }).fill('journey laptop');
      await page.getByRole('button', { name: 'Create token', exact: true }).click();
      const secret = page.getByTestId('new-token');
      await secret.waitFor();
      token = (await secret.textContent())?.trim() ?? '';
      assert.match(token, /^svc_[A-Za-z0-9_-]{43}$/);
      await page.getByText("you won't see this again").waitFor();
      await page.getByRole('button', { name: 'Copy token' }).click();
      await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
      assert.equal(await readClipboard(page), token, 'Copy puts the secret on the clipboard');
      const row = rowWith(page, 'journey laptop');
      await row.waitFor();
      assert.ok((await row.textContent())?.includes(token.slice(0, 8)), 'the list shows the prefix');
      await captureViewports(page, 'tokens-new-secret');
      await page.reload();
      await rowWith(page, 'journey laptop').waitFor();
      assert.equal(await page.getByText(token).count(), 0, 'the secret is never shown again');
      const keys = await apiGet(context, server, '/v1/keys');
      assert.doesNotMatch(JSON.stringify(keys.body), new RegExp(token), 'the list API never returns it either');
    });

    it('4-5. an agent started with that token appears on Tunnels without a reload', async () => {
      await openPage(page, 'Tunnels');
      await markDocument(page);
      // Its rules let every loopback visitor in, and show on the row.
      agent = await startAgent(server, { token, target: origin.port, args: ['--cidr-allow', '127.0.0.0/8'] });
      const row = rowWith(page, agent.hostname);
      await row.waitFor();
      await assertNotReloaded(page);
      const text = (await row.textContent()) ?? '';
      assert.match(text, /online/);
      assert.match(text, new RegExp(String(origin.port)), 'local target as the agent reports it');
      assert.match(text, /127\.0\.0\.1/, 'agent IP');
      assert.match(text, /allow 127\.0\.0\.0\/8/, 'access rules');
      assert.equal(await row.getByRole('link', { name: agent.url }).getAttribute('href'), agent.url);
      await captureViewports(page, 'tunnels');
    });

    it('6. requests through the tunnel appear live in Traffic with the right fields; Pause holds them until Resume', async () => {
      await openPage(page, 'Traffic');
      await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
      await markDocument(page);
      const sent = await visit(server, agent.hostname, '/echo?live=1', { headers: { 'user-agent': 'journey-visitor/1.0' } });
      assert.equal(sent.status, 200);
      const row = rowWith(page, '/echo?live=1');
      await row.waitFor();
      const cells = await row.getByRole('cell').allTextContents();
      assert.equal(cells[1], 'GET');
      assert.equal(cells[2], '/echo?live=1');
      assert.equal(cells[3], '200');
      assert.match(cells[4] ?? '', /^\d+ ms$/);
      assert.match(cells[5] ?? '', /^\d+(\.\d+)? (B|KB)$/);
      assert.equal(cells[6], '127.0.0.1');
      assert.equal(cells[7], 'journey-visitor/1.0');
      assert.equal(cells[8], 'HTTP/1.1');
      assert.equal(cells[9], agent.hostname);

      await page.getByRole('button', { name: 'Pause', exact: true }).click();
      await visit(server, agent.hostname, '/echo?paused=1');
      await page.getByText('1 new').waitFor();
      assert.equal(await rowWith(page, '/echo?paused=1').count(), 0, 'a paused table does not move');
      await page.getByRole('button', { name: 'Resume', exact: true }).click();
      await rowWith(page, '/echo?paused=1').waitFor();

      await page.getByLabel('Host', { exact: true }).fill('someone-else.localhost');
      await page.getByLabel('Host', { exact: true }).press('Enter');
      await page.getByText('No requests yet').waitFor();
      await page.getByLabel('Host', { exact: true }).fill(agent.hostname);
      await page.getByLabel('Host', { exact: true }).press('Enter');
      await rowWith(page, '/echo?live=1').waitFor();
      await page.getByLabel('Host', { exact: true }).fill('');
      await page.getByLabel('Host', { exact: true }).press('Enter');

      await page.getByLabel('Method', { exact: true }).selectOption('POST');
      await visit(server, agent.hostname, '/echo?post=1', { method: 'POST', body: 'x' });
      await rowWith(page, '/echo?post=1').waitFor();
      assert.equal(await rowWith(page, '/echo?paused=1').count(), 0, 'the method filter hides GET requests');
      await page.getByLabel('Method', { exact: true }).selectOption('');
      await page.getByLabel('Status', { exact: true }).selectOption('4xx');
      await visit(server, agent.hostname, '/status/404');
      await rowWith(page, '/status/404').waitFor();
      assert.equal(await rowWith(page, '/echo?live=1').count(), 0, 'the status class filter hides 200s');
      await page.getByLabel('Status', { exact: true }).selectOption('');
      await rowWith(page, '/echo?post=1').waitFor();
      await assertNotReloaded(page);
      await captureViewports(page, 'traffic');
    });

    it("7. opens a request's details with every field", async () => {
      await rowWith(page, '/echo?live=1').first().click();
      const details = page.getByRole('dialog', { name: 'Request details' });
      await details.waitFor();
      const text = (await details.textContent()) ?? '';
      for (const field of ['journey-visitor/1.0', agent.hostname, '/echo?live=1', '127.0.0.1', 'HTTP/1.1', 'GET', '200', 'Request id']) {
        assert.ok(text.includes(field), `details show ${field}`);
      }
      await captureViewports(page, 'traffic-details');
      await page.keyboard.press('Escape');
      await details.waitFor({ state: 'hidden' });
    });

    it('pages back through older requests with the cursor', async () => {
      for (let i = 0; i < 60; i++) assert.equal((await visit(server, agent.hostname, `/echo?older=${i}`)).status, 200);
      await rowWith(page, '/echo?older=59').waitFor();
      await page.reload();
      await rowWith(page, '/echo?older=59').waitFor();
      const rows = page.locator('tbody tr');
      assert.equal(await rows.count(), 50, 'the first page holds 50 requests');
      assert.equal(await rowWith(page, '/echo?live=1').count(), 0);
      await page.getByRole('button', { name: 'Load older requests', exact: true }).click();
      await rowWith(page, '/echo?live=1').waitFor();
      assert.ok((await rows.count()) > 50);
    });

    it('8. stops the tunnel from the UI; the agent exits and the hostname answers "This tunnel is offline"', async () => {
      await openPage(page, 'Tunnels');
      const row = rowWith(page, agent.hostname);
      await row.getByRole('button', { name: 'Stop', exact: true }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      await captureViewports(page, 'tunnels-stop-confirm');
      await dialog.getByRole('button', { name: 'Stop', exact: true }).click();
      const { code } = await agent.proc.exited;
      assert.equal(code, 0);
      // A stopped tunnel leaves the list (GET /v1/tunnels lists it no more).
      await row.waitFor({ state: 'detached' });
      await page.getByText('No tunnels yet').waitFor();
      const answer = await visit(server, agent.hostname, '/');
      assert.match(answer.text, /This tunnel is offline/);
    });

    it('9. adds a domain and shows its TXT record; Verify says why it failed, then succeeds once published', async () => {
      await openPage(page, 'Domains');
      // A refused domain shows the API's own message, word for word.
      const refused = await context.request.post(`${server.url}/v1/domains`, {
        headers: { 'x-csrf-token': await csrfToken(context, server) },
        data: { host: 'not a domain' },
      });
      assert.equal(refused.status(), 400);
      const { message } = (await refused.json()) as { message: string };
      await page.getByLabel('Domain', { exact: true }).fill('not a domain');
      await page.getByRole('button', { name: 'Add domain', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: message }).waitFor();

      const host = freshHost('journey');
      await page.getByLabel('Domain', { exact: true }).fill(host);
      await page.getByRole('button', { name: 'Add domain', exact: true }).click();
      const card = page.getByRole('article', { name: host });
      await card.waitFor();
      const listed = await apiGet(context, server, '/v1/domains');
      const domain = listed.body.domains.find((d: { host: string }) => d.host === host);
      assert.ok(domain);
      await card.getByText(`_svcrouter.${host}`, { exact: true }).waitFor();
      await card.getByText(domain.txtRecord.value, { exact: true }).waitFor();
      await card.getByRole('button', { name: 'Copy TXT name' }).waitFor();
      await card.getByRole('button', { name: 'Copy TXT value' }).waitFor();
      await card.getByRole('button', { name: 'Verify', exact: true }).click();
      await card.getByText(`No TXT record was found at _svcrouter.${host}`).waitFor();
      await captureViewports(page, 'domains');
      await world.dns.addTxt(`_svcrouter.${host}`, domain.txtRecord.value);
      await card.getByRole('button', { name: 'Verify', exact: true }).click();
      await card.getByText('verified', { exact: true }).waitFor();
    });

    it('10. revokes the token from the UI and the agent using it exits', async () => {
      agent = await startAgent(server, { token, target: origin.port });
      await openPage(page, 'Tokens');
      await rowWith(page, 'journey laptop').getByRole('button', { name: 'Revoke', exact: true }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
      const exited = await agent.proc.exited;
      assert.notEqual(exited.code, null);
      await page.getByText('No tokens yet').waitFor();
    });

    it('shows Usage with a chart of daily transfer and requests', async () => {
      await openPage(page, 'Usage');
      await page.locator('.uplot canvas').first().waitFor();
      await page.getByRole('meter', { name: 'Transfer' }).waitFor();
      await captureViewports(page, 'usage');
    });

    it("changes the password on Account: a wrong current password shows the server's message", async () => {
      await openPage(page, 'Account');
      await page.getByLabel('Current password', { exact: true }).fill('not-my-password');
      await page.getByLabel('New password', { exact: true }).fill(newPassword);
      await page.getByRole('button', { name: 'Change password', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: 'current password is wrong' }).waitFor();
      await page.getByLabel('Current password', { exact: true }).fill(password);
      await page.getByRole('button', { name: 'Change password', exact: true }).click();
      await page.getByText('Password changed.').waitFor();
    });

    it('11. signs out, and the API refuses the old cookie', async () => {
      const cookie = await sessionCookie(context, server);
      const before = await fetch(`${server.url}/v1/tunnels`, { headers: { cookie: `svc_session=${cookie}` } });
      assert.equal(before.status, 200);
      await openPage(page, 'Account');
      await page.getByText(email).first().waitFor();
      await captureViewports(page, 'account');
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await heading(page, 'Sign in to svcRouter').waitFor();
      assert.equal(new URL(page.url()).pathname, '/signin');
      await captureViewports(page, 'sign-in');
      const afterSignOut = await fetch(`${server.url}/v1/tunnels`, { headers: { cookie: `svc_session=${cookie}` } });
      assert.equal(afterSignOut.status, 401);
      assert.deepEqual(await afterSignOut.json(), { error: 'unauthorized' });
    });

    it('signs in again with the new password', async () => {
      await fillSignIn(page, email, newPassword);
      await heading(page, 'Overview').waitFor();
    });

    it('ran without an uncaught error or a Content-Security-Policy violation', () => {
      assert.deepEqual(pageErrors, []);
    });
  });
}
