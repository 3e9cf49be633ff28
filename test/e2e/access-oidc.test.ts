import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import { launchChromium, requireChromium } from './harness/browser.js';
import { startAgent, startOrigin, startServer, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { visitFrom } from './harness/access-support.js';
import { echoOf, signInAtIdp, startIdentityOrigin, startIdp, type TestIdp } from './harness/oidc-support.js';

// Single sign-on against a real OpenID Connect provider (oidc-provider on loopback), driven in
// Chromium through the edge: the redirect, the provider's login, back on the tunnel host, and a
// local service that verifies X-Svc-Identity with the apex's JWKS. Then what a hostile visitor
// tries: another host's cookie, a tampered one, forged identity headers, a replayed code, an
// open redirect, and requests that are not navigations.

const PROVIDER = 'test-idp';
/** A second provider name (same IdP): a tunnel bound again with it must not take the first one's sessions. */
const OTHER_PROVIDER = 'other-idp';
const JSON_ACCEPT = { accept: 'application/json' };

if (requireChromium('single sign-on in Chromium')) {
  describe('single sign-on with OpenID Connect', () => {
    let idp: TestIdp;
    let server: TestServer;
    let origin: { port: number; close(): Promise<void> };
    let plainOrigin: TestOrigin;
    let browser: Browser;
    let alice: TestAgent;
    let anyone: TestAgent;
    let open: TestAgent;
    const url = (agent: TestAgent, path: string) => `https://${agent.hostname}:${server.httpsPort}${path}`;

    before(async () => {
      idp = await startIdp();
      const providers = [...JSON.parse(idp.providersEnv(PROVIDER)), ...JSON.parse(idp.providersEnv(OTHER_PROVIDER))] as unknown[];
      server = await startServer({ env: { SVC_OIDC_PROVIDERS: JSON.stringify(providers) } });
      idp.serve([`https://localhost:${server.httpsPort}/auth/oidc/${PROVIDER}/callback`]);
      origin = await startIdentityOrigin(`${server.url}/.well-known/jwks.json`, `https://localhost:${server.httpsPort}`);
      plainOrigin = await startOrigin();
      const token = server.token;
      const rules = ['--oidc', PROVIDER, '--allow-email', 'Alice@Example.com', '--allow-domain', 'example.org'];
      alice = await startAgent(server, { token, target: origin.port, subdomain: 'sso-a', args: rules });
      anyone = await startAgent(server, { token, target: origin.port, subdomain: 'sso-b', args: ['--oidc', PROVIDER] });
      open = await startAgent(server, { token, target: plainOrigin.port, subdomain: 'open' });
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await Promise.all([alice, anyone, open].map((agent) => agent?.close()));
      await server?.close();
      await Promise.all([origin?.close(), plainOrigin?.close(), idp?.close()]);
    });

    /** A fresh browser profile signed in as `email` on `agent`'s host; answers its context and the session cookie. */
    async function signedIn(agent: TestAgent, email: string, path = '/echo'): Promise<{ context: BrowserContext; cookie: string }> {
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      const page = await context.newPage();
      await page.goto(url(agent, path));
      await signInAtIdp(page, idp.issuer, email, agent.hostname);
      const cookie = (await context.cookies(url(agent, '/'))).find((c) => c.name === '__Host-svc_session');
      assert.ok(cookie, 'the session cookie is set on the tunnel host');
      return { context, cookie: cookie.value };
    }

    it('sends a browser to sign in, then back to the page it asked for, and the local service verifies who it is', async () => {
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      try {
        const page = await context.newPage();
        await page.goto(url(alice, '/echo?x=1'));
        await signInAtIdp(page, idp.issuer, 'alice@example.com', alice.hostname);
        assert.equal(page.url(), url(alice, '/echo?x=1'));
        const echo = await echoOf(page);
        assert.equal(echo.error, null);
        assert.equal(echo.identity?.email, 'alice@example.com');
        assert.equal(echo.identity?.sub, 'alice@example.com');
        assert.equal(echo.identity?.aud, alice.hostname);
        assert.ok(echo.identity!.exp! - Math.floor(Date.now() / 1000) <= 300, 'the token expires within five minutes');
        assert.equal(echo.headers['x-forwarded-email'], 'alice@example.com');
        assert.doesNotMatch(String(echo.headers.cookie ?? ''), /__svc_|__Host-svc_/, 'the edge keeps its cookies to itself');
        const cookie = (await context.cookies(url(alice, '/'))).find((c) => c.name === '__Host-svc_session');
        assert.equal(cookie?.name, '__Host-svc_session', 'over HTTPS, a name no other host can set');
        assert.equal(cookie?.domain, alice.hostname, 'host-only: no Domain attribute');
        assert.equal(cookie?.httpOnly, true);
        assert.equal(cookie?.secure, true);
        assert.equal(cookie?.sameSite, 'Lax');
      } finally {
        await context.close();
      }
    });

    it('lets in a domain on the allow list, and answers 403 to a signed-in email on neither list', async () => {
      const bob = await signedIn(alice, 'bob@example.org');
      try {
        const page = await bob.context.newPage();
        await page.goto(url(alice, '/echo'));
        assert.equal((await echoOf(page)).identity?.email, 'bob@example.org');
      } finally {
        await bob.context.close();
      }
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      try {
        const page = await context.newPage();
        await page.goto(url(alice, '/echo'));
        await page.waitForURL((u) => u.href.startsWith(idp.issuer));
        await page.fill('input[name="login"]', 'mallory@example.net');
        await page.fill('input[name="password"]', 'x');
        const [response] = await Promise.all([
          page.waitForResponse((r) => new URL(r.url()).hostname === alice.hostname && r.status() === 403, { timeout: 20_000 }),
          (async () => {
            await page.click('button[type="submit"]');
            await page.waitForURL((u) => u.hostname === alice.hostname || u.pathname.includes('interaction'));
            if (new URL(page.url()).hostname !== alice.hostname) await page.click('button[type="submit"]');
          })(),
        ]);
        assert.equal(response.status(), 403);
        assert.match(await response.text(), /Access denied[\s\S]*mallory@example\.net/);
      } finally {
        await context.close();
      }
    });

    it('ends the session at /.svc/logout: a copy of the cookie is refused, and the next page goes to sign in again', async () => {
      const { context, cookie } = await signedIn(anyone, 'carol@example.com');
      try {
        const replay = () =>
          visitFrom(server, anyone.hostname, '/echo', { headers: { ...JSON_ACCEPT, cookie: `__svc_session=${cookie}` } });
        assert.equal((await replay()).status, 200, 'the copy works while the session lasts');
        const page = await context.newPage();
        await page.goto(url(anyone, '/.svc/logout'));
        assert.match(await page.locator('body').innerText(), /signed out/i);
        // The session cookie is gone; the used sign-in cookie (Path=/ over HTTPS) lasts out its ten minutes.
        const left = await context.cookies(url(anyone, '/'));
        assert.deepEqual(
          left.map((c) => c.name),
          ['__Host-svc_signin'],
        );
        assert.ok(left[0]!.expires * 1000 <= Date.now() + 600_000, 'at most ten minutes');
        // The copy kept elsewhere (stolen, another tab's) is refused by the edge, not only forgotten by this browser.
        const refused = await replay();
        assert.equal(refused.status, 401);
        assert.equal((JSON.parse(refused.text) as { error: string }).error, 'unauthorized');
        const navigation = await visitFrom(server, anyone.hostname, '/echo', {
          headers: { accept: 'text/html', cookie: `__svc_session=${cookie}` },
        });
        assert.equal(navigation.status, 302, 'a navigation with the copy is sent to sign in');
        assert.ok(String(navigation.headers.location).startsWith(`${idp.issuer}/`));
        // Signing out again with the copy is harmless.
        const again = await visitFrom(server, anyone.hostname, '/.svc/logout', { headers: { cookie: `__svc_session=${cookie}` } });
        assert.equal(again.status, 200);
        // The next page goes through the provider again (which, still signed in itself, sends the browser straight back).
        const visited: string[] = [];
        page.on('request', (request) => visited.push(request.url()));
        await page.goto(url(anyone, '/echo'));
        assert.ok(
          visited.some((u) => u.startsWith(`${idp.issuer}/auth`)),
          'sent to the provider to sign in again',
        );
        assert.ok(
          visited.some((u) => u.includes('/.svc/oidc/return?code=')),
          'back through a new one-time code',
        );
        assert.equal((await echoOf(page)).identity?.email, 'carol@example.com', 'a new session works');
      } finally {
        await context.close();
      }
    });

    it('checks a session against the rules of the tunnel bound now: deleted and bound again with other rules, another provider or by another account, the cookie is refused', async () => {
      const token = server.token;
      const bind = (args: string[]) => startAgent(server, { token, target: origin.port, subdomain: 'sso-rebind', args });
      let agent = await bind(['--oidc', PROVIDER]);
      try {
        const { context, cookie } = await signedIn(agent, 'heidi@example.com');
        await context.close();
        const visit = () => visitFrom(server, agent.hostname, '/echo', { headers: { ...JSON_ACCEPT, cookie: `__svc_session=${cookie}` } });
        assert.equal((await visit()).status, 200);
        // A clean exit deletes the tunnel; the same name is bound again, each time with other rules.
        await agent.close();
        agent = await bind(['--oidc', PROVIDER, '--allow-email', 'ivan@example.com']);
        const forbidden = await visit();
        assert.equal(forbidden.status, 403, 'the identity is checked against the new allow rules');
        assert.match(forbidden.text, /heidi@example\.com/);
        await agent.close();
        agent = await bind(['--oidc', OTHER_PROVIDER]);
        assert.equal((await visit()).status, 401, 'a session of another provider is no session');
        await agent.close();
        agent = await bind(['--oidc', PROVIDER, '--allow-domain', 'example.com']);
        const allowed = await visit();
        assert.equal(allowed.status, 200, 'rules that allow it again let it in: the refusals were the rules');
        assert.equal((JSON.parse(allowed.text) as { identity: { email: string } | null }).identity?.email, 'heidi@example.com');
        // Another account binding the freed name gets no session from it: the visitor signed in to the first one's tunnel.
        await agent.close();
        const otherToken = await server.createAccount('rebinder@example.com');
        agent = await startAgent(server, { token: otherToken, target: origin.port, subdomain: 'sso-rebind', args: ['--oidc', PROVIDER] });
        assert.equal((await visit()).status, 401, 'a session made while another account held the host is no session');
      } finally {
        await agent.close();
      }
    });

    it('answers a request that is not a navigation with 401 and JSON; a navigation is redirected to the provider', async () => {
      const answer = await visitFrom(server, alice.hostname, '/api/data', { headers: JSON_ACCEPT });
      assert.equal(answer.status, 401);
      assert.match(String(answer.headers['content-type']), /application\/json/);
      assert.equal((JSON.parse(answer.text) as { error: string }).error, 'unauthorized');
      const post = await visitFrom(server, alice.hostname, '/', { headers: { accept: 'text/html' } });
      assert.equal(post.status, 302);
      assert.ok(String(post.headers.location).startsWith(`${idp.issuer}/`));
      assert.match(String(post.headers.location), /code_challenge_method=S256/);
      assert.match(String(post.headers['set-cookie']), /__svc_signin=.*HttpOnly; SameSite=Lax/);
    });

    it("refuses one host's cookie on another host, and a tampered cookie", async () => {
      const { context, cookie } = await signedIn(alice, 'alice@example.com');
      await context.close();
      const withCookie = (value: string) => ({ ...JSON_ACCEPT, cookie: `__svc_session=${value}` });
      assert.equal((await visitFrom(server, alice.hostname, '/echo', { headers: withCookie(cookie) })).status, 200);
      assert.equal((await visitFrom(server, anyone.hostname, '/echo', { headers: withCookie(cookie) })).status, 401);
      const [payload, mac] = cookie.split('.');
      const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), h: anyone.hostname }));
      assert.equal(
        (await visitFrom(server, anyone.hostname, '/echo', { headers: withCookie(`${forged.toString('base64url')}.${mac}`) })).status,
        401,
      );
      const flipped = `${cookie.slice(0, -2)}${cookie.at(-2) === 'A' ? 'B' : 'A'}${cookie.slice(-1)}`;
      assert.equal((await visitFrom(server, alice.hostname, '/echo', { headers: withCookie(flipped) })).status, 401);
      for (const junk of ['', 'x', '.', 'a.b.c', '%%%', 'A'.repeat(10_000)]) {
        assert.equal((await visitFrom(server, alice.hostname, '/echo', { headers: withCookie(junk) })).status, 401, junk.slice(0, 20));
      }
    });

    it('removes forged identity headers, on tunnels with and without single sign-on', async () => {
      const forged = {
        'x-svc-identity': 'eyJhbGciOiJub25lIn0.eyJlbWFpbCI6ImV2ZUBleGFtcGxlLmNvbSJ9.',
        'x-forwarded-email': 'eve@example.com',
      };
      const plain = await visitFrom(server, open.hostname, '/echo', { headers: forged });
      assert.equal(plain.status, 200);
      const seen = plainOrigin.seen.at(-1)!.headers;
      assert.equal(seen['x-svc-identity'], undefined);
      assert.equal(seen['x-forwarded-email'], undefined);
      const { context, cookie } = await signedIn(alice, 'alice@example.com');
      await context.close();
      const signed = await visitFrom(server, alice.hostname, '/echo', { headers: { ...forged, cookie: `__svc_session=${cookie}` } });
      const echo = JSON.parse(signed.text) as { headers: Record<string, string>; identity: { email: string } | null };
      assert.equal(echo.headers['x-forwarded-email'], 'alice@example.com');
      assert.equal(echo.identity?.email, 'alice@example.com');
    });

    it('refuses a one-time code used twice', async () => {
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      try {
        const page = await context.newPage();
        let returnUrl: string | undefined;
        page.on('request', (request) => {
          if (request.url().includes('/.svc/oidc/return?code=')) returnUrl = request.url();
        });
        await page.goto(url(anyone, '/echo'));
        await signInAtIdp(page, idp.issuer, 'dave@example.com', anyone.hostname);
        assert.ok(returnUrl, 'the browser came back through the one-time code');
        await context.clearCookies();
        const replay = await page.goto(returnUrl);
        assert.equal(replay?.status(), 400);
        assert.match(await page.locator('body').innerText(), /already used or has expired/);
        assert.equal((await context.cookies(url(anyone, '/'))).length, 0);
      } finally {
        await context.close();
      }
    });

    it('never sends the browser off the tunnel host after sign-in, whatever the path held', async () => {
      for (const path of ['//evil.example/steal', '/\\evil.example/steal']) {
        const context = await browser.newContext({ ignoreHTTPSErrors: true });
        try {
          const page = await context.newPage();
          await page.goto(`https://${anyone.hostname}:${server.httpsPort}${path}`);
          await signInAtIdp(page, idp.issuer, 'erin@example.com', anyone.hostname);
          assert.equal(new URL(page.url()).hostname, anyone.hostname);
        } finally {
          await context.close();
        }
      }
    });

    it('answers hostile sign-in requests with 4xx, never a 500', async () => {
      const apex = (path: string) => visitFrom(server, 'localhost', path, { headers: { accept: 'text/html' } });
      assert.equal((await apex(`/auth/oidc/${PROVIDER}/callback`)).status, 400);
      assert.equal((await apex(`/auth/oidc/${PROVIDER}/callback?state=${'x'.repeat(5000)}&code=y`)).status, 400);
      assert.equal((await apex(`/auth/oidc/${PROVIDER}/callback?error=access_denied`)).status, 403);
      assert.equal((await apex('/auth/oidc/nobody/callback?state=a&code=b')).status, 404);
      const jwks = await apex('/.well-known/jwks.json');
      assert.equal(jwks.status, 200);
      const [key] = (JSON.parse(jwks.text) as { keys: Array<Record<string, string>> }).keys;
      assert.equal(key?.alg, 'ES256');
      assert.equal(key?.d, undefined, 'only the public key is published');
      for (const path of [
        '/.svc/oidc/return',
        '/.svc/oidc/return?code=',
        `/.svc/oidc/return?code=${'z'.repeat(3000)}`,
        '/.svc/oidc/return?code=%ff',
      ]) {
        assert.equal((await visitFrom(server, anyone.hostname, path)).status, 400, path.slice(0, 40));
      }
    });
  });

  describe('single sign-on sessions expire', () => {
    let idp: TestIdp;
    let server: TestServer;
    let origin: { port: number; close(): Promise<void> };
    let agent: TestAgent;
    let browser: Browser;

    before(async () => {
      idp = await startIdp();
      // 0.0005 h: a session of 1.8 s.
      server = await startServer({ env: { SVC_OIDC_PROVIDERS: idp.providersEnv(PROVIDER), SVC_OIDC_SESSION_HOURS: '0.0005' } });
      idp.serve([`https://localhost:${server.httpsPort}/auth/oidc/${PROVIDER}/callback`]);
      origin = await startIdentityOrigin(`${server.url}/.well-known/jwks.json`, `https://localhost:${server.httpsPort}`);
      agent = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'brief', args: ['--oidc', PROVIDER] });
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await agent?.close();
      await server?.close();
      await Promise.all([origin?.close(), idp?.close()]);
    });

    it('refuses the cookie once the session is over', async () => {
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      try {
        const page = await context.newPage();
        await page.goto(`https://${agent.hostname}:${server.httpsPort}/echo`);
        await signInAtIdp(page, idp.issuer, 'frank@example.com', agent.hostname);
        const cookie = (await context.cookies()).find((c) => c.name === '__Host-svc_session');
        assert.ok(cookie);
        const expiresAt = (JSON.parse(Buffer.from(cookie.value.split('.')[0]!, 'base64url').toString()) as { x: number }).x;
        assert.ok(expiresAt - Date.now() <= 1800, 'the session lasts SVC_OIDC_SESSION_HOURS');
        // The browser drops the cookie itself at Max-Age; a client that keeps it is refused by the edge.
        const delay = expiresAt - Date.now() + 50;
        if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
        const answer = await visitFrom(server, agent.hostname, '/echo', {
          headers: { ...JSON_ACCEPT, cookie: `__svc_session=${cookie.value}` },
        });
        assert.equal(answer.status, 401);
      } finally {
        await context.close();
      }
    });
  });
}
