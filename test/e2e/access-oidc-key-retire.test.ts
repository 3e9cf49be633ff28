import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { Browser } from 'playwright-core';
import { SQLITE_FILE } from '@svcrouter/server/store';
import { launchChromium, requireChromium } from './harness/browser.js';
import { until } from './harness/cluster-support.js';
import { startAgent, startServer, type TestAgent, type TestServer } from './harness/index.js';
import { visitFrom } from './harness/access-support.js';
import { signInAtIdp, startIdentityOrigin, startIdp, type IdentityEcho, type TestIdp } from './harness/oidc-support.js';

// A retired signing key of X-Svc-Identity, with real processes: after `svc-server oidc rotate-key`
// the old key stays in the apex's JWKS while a token it signed may still be in use, then it is
// dropped (from the JWKS, from `svc-server oidc keys`, from the store) and a token it signed no
// longer verifies, while the new key's do. The retention (the token lifetime and some slack) is
// passed by moving the stored keys' times back, as the store would look that much later: the
// node re-reads its keys on its own schedule and acts on what it finds.

const PROVIDER = 'test-idp';
const ACTIVATION_SECONDS = 4;
/** Far beyond the retention of a replaced key: the old key is retired once the times move back by this. */
const LATER_MS = 60 * 60_000;

interface JwksKey {
  kid: string;
}

if (requireChromium('signing key retirement in Chromium')) {
  describe('signing key retirement', () => {
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
      origin = await startIdentityOrigin(`${server.url}/.well-known/jwks.json`, `https://localhost:${server.httpsPort}`, {
        jwks: { cacheMaxAge: 2_000, cooldownDuration: 1_000 },
      });
      agent = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'retire', args: ['--oidc', PROVIDER] });
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await agent?.close();
      await server?.close();
      await Promise.all([origin?.close(), idp?.close()]);
    });

    const jwks = async (): Promise<string[]> => {
      const answer = await visitFrom(server, 'localhost', '/.well-known/jwks.json');
      assert.equal(answer.status, 200);
      return (JSON.parse(answer.text) as { keys: JwksKey[] }).keys.map((key) => key.kid).sort();
    };
    const kidOf = (token: string): string => (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;
    /** Verifies a token as a local service would, with a JWKS read now (no cache from before). */
    const verify = (token: string) =>
      jwtVerify(token, createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`)), {
        issuer: `https://localhost:${server.httpsPort}`,
        audience: agent.hostname,
        algorithms: ['ES256'],
      });

    it('keeps the old key published until its retention is over, then drops it: its tokens no longer verify', async () => {
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      let cookie: string;
      try {
        const page = await context.newPage();
        await page.goto(`https://${agent.hostname}:${server.httpsPort}/echo`);
        await signInAtIdp(page, idp.issuer, 'retire@example.com', agent.hostname);
        cookie = (await context.cookies()).find((c) => c.name === '__Host-svc_session')!.value;
      } finally {
        await context.close();
      }
      const token = async (): Promise<string> => {
        const answer = await visitFrom(server, agent.hostname, '/echo', {
          headers: { accept: 'application/json', cookie: `__svc_session=${cookie}` },
        });
        assert.equal(answer.status, 200);
        const body = JSON.parse(answer.text) as IdentityEcho;
        assert.equal(body.error, null, 'the local service verifies the token');
        return String(body.headers['x-svc-identity']);
      };

      const oldToken = await token();
      const oldKid = kidOf(oldToken);
      const rotated = await server.cli(['oidc', 'rotate-key']);
      assert.equal(rotated.code, 0, rotated.stderr);
      const newKid = /New signing key (\S+):/.exec(rotated.stdout)?.[1];
      assert.ok(newKid, rotated.stdout);
      let newToken = '';
      await until(
        'tokens carry the new kid',
        async () => {
          newToken = await token();
          return kidOf(newToken) === newKid;
        },
        400,
      );
      // Retiring: still published, so the token signed just before the switch verifies.
      assert.deepEqual(await jwks(), [oldKid, newKid].sort());
      assert.equal((await verify(oldToken)).payload.email, 'retire@example.com');

      // The store as it will be once the retention is over.
      const retiredLine = server.proc.waitForLine(new RegExp(`"kid":"${oldKid}".*retired signing key deleted`));
      const db = new Database(path.join(server.dataDir, SQLITE_FILE));
      try {
        db.prepare('update oidc_signing_keys set created_at = created_at - ?, active_at = active_at - ?').run(LATER_MS, LATER_MS);
      } finally {
        db.close();
      }
      await retiredLine;

      assert.deepEqual(await jwks(), [newKid], 'the retired key left the JWKS');
      const listed = await server.cli(['oidc', 'keys', '--json']);
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(
        (JSON.parse(listed.stdout) as { keys: Array<{ kid: string; state: string }> }).keys.map((k) => [k.kid, k.state]),
        [[newKid, 'signing']],
      );
      await assert.rejects(verify(oldToken), /no applicable key found in the JSON Web Key Set/);
      assert.equal((await verify(newToken)).payload.email, 'retire@example.com', "the new key's tokens verify");
      // The local service's own cache of the JWKS lets the old key go within its max age too.
      await until('the local service refuses the old token', async () => {
        const answer = await visitFrom({ httpPort: origin.port }, agent.hostname, '/echo', {
          headers: { 'x-svc-identity': oldToken, 'x-forwarded-host': agent.hostname },
        });
        return (JSON.parse(answer.text) as IdentityEcho).error !== null;
      });
      assert.equal(kidOf(await token()), newKid);
    });
  });
}
