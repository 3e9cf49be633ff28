import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium, requireChromium } from './harness/browser.js';
import { until } from './harness/cluster-support.js';
import { startAgent, startServer, type TestAgent, type TestServer } from './harness/index.js';
import { visitFrom } from './harness/access-support.js';
import { startOwnPostgres, type OwnPostgres } from './harness/own-postgres.js';
import { signInAtIdp, startIdentityOrigin, startIdp, type TestIdp } from './harness/oidc-support.js';

// A node that cannot read the list of signed-out sessions fails closed, with real processes: the
// node's PostgreSQL is stopped under a signed-in visitor, who is still admitted for the bound
// (SVC_OIDC_SIGNOUT_STALE_SECONDS, 3 s here instead of 30) and then gets 503 with Retry-After on
// every request, rather than pass with a session that may have been signed out on another node;
// once PostgreSQL is back and the list read again, the visitor is admitted again.

const PROVIDER = 'test-idp';
const STALE_SECONDS = 3;
/** How often a node reads the sign-outs (oidc/revocations.ts): its last good read is at most this before the stop. */
const POLL_MS = 500;

if (requireChromium('sign-out list unreadable in Chromium')) {
  describe('the list of signed-out sessions unreadable (PostgreSQL stopped)', () => {
    let postgres: OwnPostgres | undefined;
    let skip: string | false = false;
    let idp: TestIdp;
    let server: TestServer;
    let origin: { port: number; close(): Promise<void> };
    let agent: TestAgent;
    let browser: Browser;

    before(async () => {
      const started = await startOwnPostgres();
      if (typeof started === 'string') {
        skip = started;
        if (process.env.CI === 'true') assert.fail(`${skip}; CI installs postgresql and must run this test`);
        return;
      }
      postgres = started;
      idp = await startIdp();
      server = await startServer({
        env: {
          SVC_DATABASE_URL: postgres.url,
          SVC_OIDC_PROVIDERS: idp.providersEnv(PROVIDER),
          SVC_OIDC_SIGNOUT_STALE_SECONDS: String(STALE_SECONDS),
        },
      });
      idp.serve([`https://localhost:${server.httpsPort}/auth/oidc/${PROVIDER}/callback`]);
      origin = await startIdentityOrigin(`${server.url}/.well-known/jwks.json`, `https://localhost:${server.httpsPort}`);
      agent = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'stale', args: ['--oidc', PROVIDER] });
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await agent?.close();
      await server?.close();
      await Promise.all([origin?.close(), idp?.close()]);
      await postgres?.remove();
    });

    it('admits the signed-in visitor for the bound, then answers 503 until the list is read again', async (t) => {
      if (skip) return t.skip(skip);
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      let cookie: string;
      try {
        const page = await context.newPage();
        await page.goto(`https://${agent.hostname}:${server.httpsPort}/echo`);
        await signInAtIdp(page, idp.issuer, 'stale@example.com', agent.hostname);
        cookie = (await context.cookies()).find((c) => c.name === '__Host-svc_session')!.value;
      } finally {
        await context.close();
      }
      const echo = () =>
        visitFrom(server, agent.hostname, '/echo', { headers: { accept: 'application/json', cookie: `__svc_session=${cookie}` } });
      assert.equal((await echo()).status, 200);

      const unreadable = server.proc.waitForLine(/reading signed-out sessions failed/);
      const stoppedAt = performance.now();
      await postgres!.stop();
      await unreadable;
      // Admitted while the last good read is recent enough, then refused: never a 500, never let through after.
      const statuses: number[] = [];
      let refused: Awaited<ReturnType<typeof echo>> | undefined;
      await until(
        'the signed-in visitor is refused',
        async () => {
          const answer = await echo();
          statuses.push(answer.status);
          if (answer.status === 503) refused = answer;
          return refused !== undefined;
        },
        2_000,
      );
      const took = performance.now() - stoppedAt;
      assert.ok(took >= STALE_SECONDS * 1000 - POLL_MS, `refused ${Math.round(took)} ms after the stop, before the bound`);
      assert.ok(
        statuses.every((status) => status === 200 || status === 503),
        `only 200 then 503: ${statuses.join(',')}`,
      );
      assert.equal(statuses.indexOf(503), statuses.length - 1);
      assert.equal(refused!.headers['retry-after'], '5');
      assert.equal(refused!.headers['cache-control'], 'no-store');
      assert.match(refused!.text, /cannot check signed-in sessions right now/);
      // Still refused while the store is away: the next request too.
      assert.equal((await echo()).status, 503);

      await postgres!.start();
      await until('the signed-in visitor is admitted again', async () => (await echo()).status === 200, 600);
      const body = JSON.parse((await echo()).text) as { identity: { email: string } | null; error: string | null };
      assert.equal(body.error, null);
      assert.equal(body.identity?.email, 'stale@example.com');
    });
  });
}
