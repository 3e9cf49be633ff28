import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium, requireChromium } from './harness/browser.js';
import { until } from './harness/cluster-support.js';
import { startAgent, startServer, type TestAgent, type TestServer } from './harness/index.js';
import { visitFrom } from './harness/access-support.js';
import { signInAtIdp, startIdentityOrigin, startIdp, type IdentityEcho, type TestIdp } from './harness/oidc-support.js';

// Rotating the signing key of X-Svc-Identity: `svc-server oidc rotate-key` run as a process of
// its own against the server's store; the JWKS publishes both keys, tokens carry the new kid once
// the activation delay (SVC_OIDC_KEY_ACTIVATION_SECONDS, 4 s here) is over, and a local service
// verifying with `jose` against the JWKS keeps verifying every token across the switch.

const PROVIDER = 'test-idp';
const ACTIVATION_SECONDS = 4;

interface JwksKey {
  kid: string;
  alg: string;
  d?: string;
}

if (requireChromium('signing key rotation in Chromium')) {
  describe('signing key rotation', () => {
    let idp: TestIdp;
    let server: TestServer;
    let origin: { port: number; close(): Promise<void> };
    let agent: TestAgent;
    let browser: Browser;

    before(async () => {
      idp = await startIdp();
      server = await startServer({
        env: { SVC_OIDC_PROVIDERS: idp.providersEnv(PROVIDER), SVC_OIDC_KEY_ACTIVATION_SECONDS: String(ACTIVATION_SECONDS) },
      });
      idp.serve([`https://localhost:${server.httpsPort}/auth/oidc/${PROVIDER}/callback`]);
      // A verifier that keeps the JWKS no longer than the max-age the apex sends (2 s for a 4 s delay).
      origin = await startIdentityOrigin(`${server.url}/.well-known/jwks.json`, `https://localhost:${server.httpsPort}`, {
        jwks: { cacheMaxAge: 2_000, cooldownDuration: 1_000 },
      });
      agent = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'rotate', args: ['--oidc', PROVIDER] });
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await agent?.close();
      await server?.close();
      await Promise.all([origin?.close(), idp?.close()]);
    });

    const jwks = async (): Promise<{ keys: JwksKey[]; cacheControl: string }> => {
      const answer = await visitFrom(server, 'localhost', '/.well-known/jwks.json');
      assert.equal(answer.status, 200);
      return { keys: (JSON.parse(answer.text) as { keys: JwksKey[] }).keys, cacheControl: String(answer.headers['cache-control']) };
    };
    const kidOf = (echo: IdentityEcho): string =>
      (JSON.parse(Buffer.from(String(echo.headers['x-svc-identity']).split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;

    it('publishes the new key at once, signs with it after the delay, and the service verifies every token across the switch', async () => {
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      let cookie: string;
      try {
        const page = await context.newPage();
        await page.goto(`https://${agent.hostname}:${server.httpsPort}/echo`);
        await signInAtIdp(page, idp.issuer, 'judy@example.com', agent.hostname);
        cookie = (await context.cookies()).find((c) => c.name === '__Host-svc_session')!.value;
      } finally {
        await context.close();
      }
      const echo = async (): Promise<IdentityEcho> => {
        const answer = await visitFrom(server, agent.hostname, '/echo', {
          headers: { accept: 'application/json', cookie: `__svc_session=${cookie}` },
        });
        assert.equal(answer.status, 200);
        const body = JSON.parse(answer.text) as IdentityEcho;
        assert.equal(body.error, null, 'the local service verifies the token with the JWKS');
        assert.equal(body.identity?.email, 'judy@example.com');
        return body;
      };
      const before = await jwks();
      assert.equal(before.keys.length, 1);
      assert.equal(before.cacheControl, 'public, max-age=2', 'cached for half the activation delay at most');
      const oldKid = before.keys[0]!.kid;
      assert.equal(kidOf(await echo()), oldKid);

      const rotated = await server.cli(['oidc', 'rotate-key']);
      assert.equal(rotated.code, 0, rotated.stderr);
      const newKid = /New signing key (\S+):/.exec(rotated.stdout)?.[1];
      assert.ok(newKid, rotated.stdout);
      assert.match(rotated.stdout, new RegExp(`The key it replaces, ${oldKid}, stays published until `));
      const rotatedAt = Date.now();

      // Published before it signs: the node re-reads the keys every second (a quarter of the delay).
      await until('the JWKS publishes both keys', async () => (await jwks()).keys.length === 2);
      const published = (await jwks()).keys;
      assert.deepEqual(published.map((k) => k.kid).sort(), [oldKid, newKid].sort());
      assert.ok(
        published.every((k) => k.alg === 'ES256' && k.d === undefined),
        'public keys only',
      );
      assert.ok(Date.now() - rotatedAt < ACTIVATION_SECONDS * 1000, 'published before the switch');

      // Every token from here to the switch verifies, old kid first, then the new one.
      const kids: string[] = [];
      await until(
        'tokens carry the new kid',
        async () => {
          kids.push(kidOf(await echo()));
          return kids.at(-1) === newKid;
        },
        400,
      );
      assert.ok(Date.now() - rotatedAt >= ACTIVATION_SECONDS * 1000 - 1000, 'not before the activation delay');
      assert.equal(kids[0], oldKid, 'the old key signs until the switch');
      assert.equal(kidOf(await echo()), newKid);

      // The old key stays published for tokens it signed just before the switch.
      assert.deepEqual((await jwks()).keys.map((k) => k.kid).sort(), [oldKid, newKid].sort());
      const listed = await server.cli(['oidc', 'keys', '--json']);
      assert.equal(listed.code, 0, listed.stderr);
      const keys = (JSON.parse(listed.stdout) as { keys: Array<{ kid: string; state: string; activeAt: number; dropAt: number | null }> })
        .keys;
      const byKid = new Map(keys.map((k) => [k.kid, k]));
      assert.equal(byKid.get(oldKid)?.state, 'retiring');
      assert.equal(byKid.get(newKid)?.state, 'signing');
      assert.equal(byKid.get(oldKid)?.dropAt, byKid.get(newKid)!.activeAt + 10 * 60_000, 'dropped 10 minutes after the switch');
      const table = await server.cli(['oidc', 'keys']);
      assert.match(table.stdout, /^KID\s+STATE\s+CREATED\s+SIGNS FROM\s+DROPPED AT$/m);
      assert.match(table.stdout, new RegExp(`^${newKid}\\s+signing\\s`, 'm'));
    });

    it('refuses a bad command line with its usage', async () => {
      for (const args of [['oidc'], ['oidc', 'keys', '--yaml'], ['oidc', 'rotate-key', 'now']]) {
        const result = await server.cli(args);
        assert.equal(result.code, 2, args.join(' '));
        assert.match(result.stderr, /usage: svc-server oidc rotate-key \| svc-server oidc keys \[--json\]/);
      }
    });
  });
}
