import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, requireChromium, VIEWPORTS } from './harness/browser.js';
import { startAgent, startOrigin, startServer, visit, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import {
  apiGet,
  createTokenInUi,
  csrfToken,
  expectEmptyStates,
  fillSignIn,
  heading,
  openPage,
  SESSION_COOKIE,
  sessionCookie,
  signUp,
} from './harness/dashboard-support.js';

// The dashboard's security cases in Chromium against a real server, agent and local service:
// a wrong password, a state change without CSRF protection, two accounts side by side, and
// what a tunnel's local service receives from a signed-in browser.

const PASSWORD = 'security-password-1';
const unique = (label: string): string => `${label}-${randomBytes(4).toString('hex')}@example.com`;

if (requireChromium('dashboard security')) {
  describe('dashboard security in Chromium', () => {
    const emailA = unique('alice');
    const emailB = unique('bob');
    let server: TestServer;
    let origin: TestOrigin;
    let browser: Browser;
    let alice: { context: BrowserContext; page: Page };
    let agent: TestAgent;
    let aliceDomainId: string;
    let aliceTunnelId: string;

    async function newUser(): Promise<{ context: BrowserContext; page: Page }> {
      const context = await browser.newContext({ baseURL: server.url, viewport: VIEWPORTS.desktop });
      return { context, page: await context.newPage() };
    }

    before(async () => {
      server = await startServer();
      origin = await startOrigin();
      browser = await launchChromium();
      alice = await newUser();
      await signUp(alice.page, emailA, PASSWORD);
      const token = await createTokenInUi(alice.page, 'alice laptop');
      agent = await startAgent(server, { token, target: origin.port });
      assert.equal((await visit(server, agent.hostname, '/echo?who=alice')).status, 200);
      await openPage(alice.page, 'Domains');
      await alice.page.getByLabel('Domain', { exact: true }).fill(`alice-${randomBytes(3).toString('hex')}.example.test`);
      await alice.page.getByRole('button', { name: 'Add domain', exact: true }).click();
      await alice.page.getByRole('article').first().waitFor();
      aliceDomainId = (await apiGet(alice.context, server, '/v1/domains')).body.domains[0].id;
      aliceTunnelId = (await apiGet(alice.context, server, '/v1/tunnels')).body.tunnels[0].id;
    });
    after(async () => {
      await agent?.close();
      await browser?.close();
      await origin?.close();
      await server?.close();
    });

    it('a wrong password fails with the message "wrong email or password" and no session', async () => {
      const stranger = await newUser();
      await fillSignIn(stranger.page, emailA, 'not-the-password');
      await stranger.page.getByRole('alert').filter({ hasText: 'wrong email or password' }).waitFor();
      assert.equal(new URL(stranger.page.url()).pathname, '/signin');
      assert.equal(
        (await stranger.context.cookies(server.url)).some((c) => c.name === SESSION_COOKIE),
        false,
      );
      await stranger.context.close();
    });

    it('a state-changing request with the cookie but without the CSRF header is refused with 403', async () => {
      const before = (await apiGet(alice.context, server, '/v1/keys')).body.keys.length;
      const refused = await alice.page.evaluate(async () => {
        const res = await fetch('/v1/keys', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"description":"forged"}',
        });
        return { status: res.status, body: (await res.json()) as unknown };
      });
      assert.deepEqual(refused, {
        status: 403,
        body: { error: 'csrf_failed', message: 'missing or invalid X-CSRF-Token header; reload the dashboard' },
      });
      // The right header from another origin is refused too; from the apex it works.
      const cookie = `${SESSION_COOKIE}=${await sessionCookie(alice.context, server)}`;
      const headers = { cookie, 'content-type': 'application/json', 'x-csrf-token': await csrfToken(alice.context, server) };
      const crossOrigin = await fetch(`${server.url}/v1/keys`, {
        method: 'POST',
        headers: { ...headers, origin: 'http://evil.example' },
        body: '{}',
      });
      assert.equal(crossOrigin.status, 403);
      assert.equal(((await crossOrigin.json()) as { error: string }).error, 'csrf_failed');
      assert.equal((await apiGet(alice.context, server, '/v1/keys')).body.keys.length, before, 'nothing was created');
      const sameOrigin = await fetch(`${server.url}/v1/keys`, { method: 'POST', headers: { ...headers, origin: server.url }, body: '{}' });
      assert.equal(sameOrigin.status, 201);
    });

    it("one account's session sees none of another's tunnels, requests, domains or tokens", async () => {
      const bob = await newUser();
      await signUp(bob.page, emailB, PASSWORD);
      await expectEmptyStates(bob.page);
      assert.deepEqual((await apiGet(bob.context, server, '/v1/tunnels')).body, { tunnels: [] });
      assert.deepEqual((await apiGet(bob.context, server, '/v1/requests')).body.requests, []);
      assert.deepEqual((await apiGet(bob.context, server, `/v1/requests?host=${agent.hostname}`)).body.requests, []);
      assert.deepEqual((await apiGet(bob.context, server, '/v1/domains')).body, { domains: [] });
      assert.deepEqual((await apiGet(bob.context, server, '/v1/keys')).body, { keys: [] });
      assert.equal((await apiGet(bob.context, server, `/v1/domains/${aliceDomainId}`)).status, 404);
      const stop = await bob.context.request.delete(`${server.url}/v1/tunnels/${aliceTunnelId}`, {
        headers: { 'x-csrf-token': await csrfToken(bob.context, server) },
      });
      assert.equal(stop.status(), 404);
      assert.equal((await visit(server, agent.hostname, '/echo?still=up')).status, 200, "Alice's tunnel still serves");
      await bob.context.close();
    });

    it('the session cookie is host-only and never reaches a tunnel hostname or its local service', async () => {
      const cookie = (await alice.context.cookies(server.url)).find((c) => c.name === SESSION_COOKIE);
      assert.ok(cookie);
      assert.equal(cookie.domain, 'localhost', 'no Domain attribute: host-only');
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.sameSite, 'Lax');
      const response = await alice.page.goto(`http://${agent.hostname}:${server.httpPort}/echo?cookie-check=1`);
      assert.equal(response?.status(), 200);
      const seen = origin.seen.find((request) => request.url === '/echo?cookie-check=1');
      assert.ok(seen, 'the local service received the browser request');
      assert.doesNotMatch(String(seen.headers.cookie ?? ''), new RegExp(SESSION_COOKIE));
    });

    it('works from the keyboard: Tab reaches the navigation, Enter follows it, a confirmation takes focus and Escape cancels it', async () => {
      const { page } = alice;
      await page.goto('/');
      await heading(page, 'Overview').waitFor();
      let focused = '';
      for (let presses = 0; presses < 20 && focused !== 'Tokens'; presses++) {
        await page.keyboard.press('Tab');
        focused = (await page.locator(':focus').textContent()) ?? '';
      }
      assert.equal(focused, 'Tokens', 'Tab reaches the Tokens link');
      await page.keyboard.press('Enter');
      await heading(page, 'Tokens').waitFor();
      await page.getByRole('button', { name: 'Revoke', exact: true }).first().focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      assert.equal(await page.locator('dialog[open] :focus').count(), 1, 'focus moves into the dialog');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      assert.ok((await apiGet(alice.context, server, '/v1/keys')).body.keys.length > 0, 'Escape revoked nothing');
    });

    it('serves the dashboard with a strict Content-Security-Policy and no framing', async () => {
      const response = await alice.page.goto('/tunnels');
      const headers = response?.headers() ?? {};
      assert.match(headers['content-security-policy'] ?? '', /script-src 'self';/);
      assert.doesNotMatch(headers['content-security-policy'] ?? '', /unsafe-inline|unsafe-eval/);
      assert.match(headers['content-security-policy'] ?? '', /frame-ancestors 'none'/);
      assert.equal(headers['x-frame-options'], 'DENY');
      assert.equal(headers['referrer-policy'], 'same-origin');
      assert.equal(headers['cache-control'], 'no-cache');
    });
  });
}

if (requireChromium('dashboard with sign-up closed')) {
  describe('dashboard with SVC_SIGNUP=closed in Chromium', () => {
    let server: TestServer;
    let browser: Browser;

    before(async () => {
      server = await startServer({ env: { SVC_SIGNUP: 'closed' } });
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    it('says sign-up is closed instead of showing the form, and Sign in offers no sign-up link', async () => {
      const page = await browser.newPage({ baseURL: server.url });
      await page.goto('/signup');
      await page.getByRole('alert').filter({ hasText: 'Sign-up is closed on this server' }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Sign up', exact: true }).count(), 0);
      await page.goto('/signin');
      await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
      assert.equal(await page.getByRole('link', { name: 'Create one' }).count(), 0);
    });
  });
}
