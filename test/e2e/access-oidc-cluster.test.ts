import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { freshDatabase, startNode, until, type TestDatabase, postgresSuite } from './harness/cluster-support.js';
import { launchChromium, requireChromium } from './harness/browser.js';
import { startAgent, type TestAgent, type TestServer } from './harness/index.js';
import { visitFrom } from './harness/access-support.js';
import { echoOf, signInAtIdp, startIdentityOrigin, startIdp, type IdentityEcho, type TestIdp } from './harness/oidc-support.js';

// Single sign-on on a cluster: two svc-server processes on one real PostgreSQL, the agent's
// session on node A, the browser through node B. The sign-in's tickets and keys are in the store,
// so a sign-in started on one node ends on another, and an identity signed by A verifies with
// the JWKS B publishes.

const PROVIDER = 'test-idp';

postgresSuite('single sign-on on a cluster', (baseUrl) => {
  if (!requireChromium('single sign-on on a cluster in Chromium')) return;
  describe('single sign-on on several edge nodes', () => {
    let database: TestDatabase;
    let idp: TestIdp;
    let a: TestServer;
    let b: TestServer;
    let origin: { port: number; close(): Promise<void> };
    const memberOrigins: Array<{ port: number; close(): Promise<void> }> = [];
    let agent: TestAgent;
    /** A pool with a member on each node: each node checks the sessions of its own visitors. */
    const members: TestAgent[] = [];
    let browser: Browser;

    before(async () => {
      database = await freshDatabase(baseUrl);
      idp = await startIdp();
      const env = { SVC_OIDC_PROVIDERS: idp.providersEnv(PROVIDER) };
      a = await startNode(database.url, 'node-a', { first: true, env });
      b = await startNode(database.url, 'node-b', { env });
      // The sign-in starts on the node holding the agent (A), whose apex is the callback's.
      idp.serve([a, b].map((node) => `https://localhost:${node.httpsPort}/auth/oidc/${PROVIDER}/callback`));
      // The local service trusts node B's JWKS: the key is the cluster's, not one node's.
      origin = await startIdentityOrigin(`${b.url}/.well-known/jwks.json`, `https://localhost:${a.httpsPort}`);
      agent = await startAgent(a, {
        token: a.token,
        target: origin.port,
        subdomain: 'sso-cluster',
        args: ['--oidc', PROVIDER, '--allow-domain', 'example.com'],
      });
      await until(
        `${agent.hostname} routed through B`,
        async () => (await visitFrom(b, agent.hostname, '/', { headers: { accept: 'application/json' } })).status === 401,
      );
      for (const [name, node] of [
        ['a', a],
        ['b', b],
      ] as const) {
        const memberOrigin = await startIdentityOrigin(`${node.url}/.well-known/jwks.json`, `https://localhost:${a.httpsPort}`, { name });
        memberOrigins.push(memberOrigin);
        members.push(
          await startAgent(node, {
            token: a.token,
            target: memberOrigin.port,
            subdomain: 'sso-pool',
            args: ['--pool', '--oidc', PROVIDER, '--allow-domain', 'example.com'],
          }),
        );
      }
      await until('both pool members routed', async () => {
        const rows = await database.query(`select node_id from cluster_routes where hostname = 'sso-pool.localhost'`);
        return rows.length === 2;
      });
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await Promise.all(members.map((member) => member.close()));
      await agent?.close();
      await Promise.all([a, b].map((node) => node?.close()));
      await Promise.all([origin?.close(), idp?.close(), ...memberOrigins.map((o) => o.close())]);
      await database?.drop();
    });

    it("signs in through another node, and the service verifies the identity with any node's JWKS", async () => {
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      try {
        const page = await context.newPage();
        await page.goto(`https://${agent.hostname}:${b.httpsPort}/echo`);
        await signInAtIdp(page, idp.issuer, 'grace@example.com', agent.hostname);
        assert.equal(new URL(page.url()).port, String(b.httpsPort), 'back on the node the visitor came through');
        const echo = await echoOf(page);
        assert.equal(echo.error, null);
        assert.equal(echo.identity?.email, 'grace@example.com');
        assert.doesNotMatch(String(echo.headers.cookie ?? ''), /__svc_/);
        // The same cookie is good on node A too.
        const cookie = (await context.cookies()).find((c) => c.name === '__Host-svc_session')!;
        const viaA = await visitFrom(a, agent.hostname, '/echo', {
          headers: { accept: 'application/json', cookie: `__svc_session=${cookie.value}` },
        });
        assert.equal(viaA.status, 200);
        const forged = await visitFrom(b, agent.hostname, '/echo', {
          headers: { accept: 'application/json', cookie: `__svc_session=${cookie.value}`, 'x-forwarded-email': 'eve@example.com' },
        });
        assert.equal((JSON.parse(forged.text) as { headers: Record<string, string> }).headers['x-forwarded-email'], 'grace@example.com');
      } finally {
        await context.close();
      }
    });

    it('refuses a signed-out session on the other node within about a second', async (t) => {
      const host = members[0]!.hostname;
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      let cookie: string;
      try {
        const page = await context.newPage();
        await page.goto(`https://${host}:${b.httpsPort}/echo`);
        await signInAtIdp(page, idp.issuer, 'ken@example.com', host);
        cookie = (await context.cookies()).find((c) => c.name === '__Host-svc_session')!.value;
      } finally {
        await context.close();
      }
      const headers = { accept: 'application/json', cookie: `__svc_session=${cookie}` };
      const served = async (node: TestServer) => {
        const answer = await visitFrom(node, host, '/echo', { headers });
        return { status: answer.status, member: answer.status === 200 ? (JSON.parse(answer.text) as IdentityEcho).name : undefined };
      };
      // Each node serves its visitors through its own member, and so checks their sessions itself.
      assert.deepEqual(await served(a), { status: 200, member: 'a' });
      assert.deepEqual(await served(b), { status: 200, member: 'b' });
      const loggedOut = await visitFrom(a, host, '/.svc/logout', { headers: { cookie: `__svc_session=${cookie}` } });
      assert.equal(loggedOut.status, 200);
      const signedOutAt = Date.now();
      assert.equal((await served(a)).status, 401, 'refused at once on the node that signed it out');
      await until('node B refuses the signed-out session', async () => (await served(b)).status === 401);
      const took = Date.now() - signedOutAt;
      t.diagnostic(`node B refused the signed-out session ${took} ms after the sign-out`);
      assert.ok(took < 2_000, `node B refused it after ${took} ms`);
      const rows = await database.query('select count(*)::int as n from oidc_revocations');
      assert.equal(rows[0]?.n, 1, 'the sign-out is in the store, for every node');
    });
  });
});
