import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium, requireChromium } from './harness/browser.js';
import { startAgent, startServer, type TestAgent, type TestServer } from './harness/index.js';
import { signInAtIdp, startIdp, type TestIdp } from './harness/oidc-support.js';

// Cookie tossing: tunnel hosts share a domain, so a page of one tunnel can set a cookie for all
// of them (`Domain=<shared domain>`). Here the local service of one tunnel sets the edge's
// cookie names that way, in a real Chromium, and a single sign-on tunnel beside it must still
// sign its visitor in: over HTTPS the edge's cookies are `__Host-` cookies, which no other host
// can set. A shared domain of two labels, since a browser refuses a Domain of one (`localhost`).

const PROVIDER = 'test-idp';
const SHARED_DOMAIN = 'svc-sso.test';

if (requireChromium('single sign-on beside a tunnel that sets cookies for the shared domain')) {
  describe('single sign-on beside a tunnel that tosses cookies', () => {
    let idp: TestIdp;
    let server: TestServer;
    let origin: http.Server;
    let browser: Browser;
    let tosser: TestAgent;
    let guarded: TestAgent;
    const url = (agent: TestAgent, path: string) => `https://${agent.hostname}:${server.httpsPort}${path}`;

    before(async () => {
      idp = await startIdp();
      const started = await startServer({ env: { SVC_SHARED_DOMAIN: SHARED_DOMAIN, SVC_OIDC_PROVIDERS: idp.providersEnv(PROVIDER) } });
      // The agents reach the apex by address: the shared domain is not in DNS.
      server = { ...started, url: `http://127.0.0.1:${started.httpPort}` };
      idp.serve([`https://${SHARED_DOMAIN}:${server.httpsPort}/auth/oidc/${PROVIDER}/callback`]);
      // One local service for both tunnels: /toss sets cookies for the whole shared domain.
      origin = http.createServer((req, res) => {
        if (req.url === '/toss') {
          res.setHeader('set-cookie', [
            `__svc_session=tossed; Domain=${SHARED_DOMAIN}; Path=/; Secure; SameSite=Lax`,
            `__svc_signin=tossed; Domain=${SHARED_DOMAIN}; Path=/; Secure; SameSite=Lax`,
            `__Host-svc_session=tossed; Domain=${SHARED_DOMAIN}; Path=/; Secure; SameSite=Lax`,
            `__Host-svc_signin=tossed; Domain=${SHARED_DOMAIN}; Path=/; Secure; SameSite=Lax`,
          ]);
        }
        res.setHeader('content-type', 'text/plain');
        res.end(`served ${req.url}`);
      });
      await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
      const port = (origin.address() as AddressInfo).port;
      tosser = await startAgent(server, { token: server.token, target: port, subdomain: 'evil' });
      guarded = await startAgent(server, { token: server.token, target: port, subdomain: 'app', args: ['--oidc', PROVIDER] });
      browser = await launchChromium([`--host-resolver-rules=MAP *.${SHARED_DOMAIN} 127.0.0.1, MAP ${SHARED_DOMAIN} 127.0.0.1`]);
    });
    after(async () => {
      await browser?.close();
      await Promise.all([tosser, guarded].map((agent) => agent?.close()));
      await server?.close();
      await new Promise<void>((resolve) => (origin ? origin.close(() => resolve()) : resolve()));
      await idp?.close();
    });

    it('signs the visitor in and keeps them in, though another tunnel set the edge cookie names for the whole domain', async () => {
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      try {
        const page = await context.newPage();
        await page.goto(url(tosser, '/toss'));
        // The plain names took, for every host of the domain; the __Host- ones the browser refused.
        const tossed = (await context.cookies(url(guarded, '/'))).filter((cookie) => cookie.value === 'tossed');
        assert.deepEqual(tossed.map((cookie) => `${cookie.name} ${cookie.domain}`).sort(), [
          `__svc_session .${SHARED_DOMAIN}`,
          `__svc_signin .${SHARED_DOMAIN}`,
        ]);

        await page.goto(url(guarded, '/page?x=1'));
        await signInAtIdp(page, idp.issuer, 'carol@example.com', guarded.hostname);
        assert.equal(page.url(), url(guarded, '/page?x=1'));
        assert.equal(await page.locator('body').innerText(), 'served /page?x=1');
        const own = (await context.cookies(url(guarded, '/'))).find((cookie) => cookie.name === '__Host-svc_session');
        assert.equal(own?.domain, guarded.hostname, 'host-only');
        // The next page is served on the session, with the tossed cookies still in the browser.
        const again = await page.goto(url(guarded, '/next'));
        assert.equal(again?.status(), 200);
        assert.equal(await page.locator('body').innerText(), 'served /next');
      } finally {
        await context.close();
      }
    });
  });
}
