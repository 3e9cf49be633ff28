import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { Browser } from 'playwright-core';
import { SQLITE_FILE } from '@svcrouter/server/store';
import { launchChromium, requireChromium } from './harness/browser.js';
import { startAgent, withRestartableServer, type TestAgent, type TestServer } from './harness/index.js';
import { visitFrom } from './harness/access-support.js';
import { signInAtIdp, startIdentityOrigin, startIdp, type IdentityEcho, type TestIdp } from './harness/oidc-support.js';

// The session cookies' key sealed at rest (migration 023), with real processes: a store as a
// version before 023 left it (the key in clear in `oidc_keys`, 023 not applied) is upgraded by a
// server start: the key is sealed into `oidc_sealed_keys`, its clear row deleted, and a cookie
// made with it before the upgrade still signs the visitor in.

const PROVIDER = 'test-idp';

/** The store of `server`, brought back to before 023 with `key` as its cookie key in clear. */
function backBefore023(server: TestServer, key: Buffer): void {
  const db = new Database(path.join(server.dataDir, SQLITE_FILE));
  try {
    db.exec('drop table oidc_sealed_keys');
    db.prepare(`delete from kysely_migration where name = '023_oidc_sealed_keys'`).run();
    db.prepare(`insert into oidc_keys (purpose, key_id, secret, created_at) values ('session-hmac', 'hmac', ?, ?)`).run(
      key.toString('base64url'),
      Date.now(),
    );
  } finally {
    db.close();
  }
}

/** Every key row of the store: the clear ones and the sealed ones. */
function keyRows(server: TestServer): { clear: string[]; sealed: string[] } {
  const db = new Database(path.join(server.dataDir, SQLITE_FILE), { readonly: true });
  try {
    const clear = (db.prepare('select secret from oidc_keys').all() as Array<{ secret: string }>).map((row) => row.secret);
    const sealed = (db.prepare('select sealed_secret from oidc_sealed_keys').all() as Array<{ sealed_secret: string }>).map(
      (row) => row.sealed_secret,
    );
    return { clear, sealed };
  } finally {
    db.close();
  }
}

if (requireChromium('session cookie key sealing in Chromium')) {
  describe('the session cookie key sealed at rest', () => {
    let idp: TestIdp;
    let origin: { port: number; close(): Promise<void> } | undefined;
    let browser: Browser;
    const agents: TestAgent[] = [];
    before(async () => {
      idp = await startIdp();
      browser = await launchChromium();
    });
    after(async () => {
      await Promise.all(agents.map((agent) => agent.proc.stop('SIGINT')));
      await browser?.close();
      await origin?.close();
      await idp?.close();
    });

    it(
      'seals a key kept in clear before 023 at the first start, deletes the clear row, and keeps its cookies valid',
      { timeout: 120_000 },
      async () => {
        await withRestartableServer(
          async (first, restart) => {
            idp.serve([`https://localhost:${first.httpsPort}/auth/oidc/${PROVIDER}/callback`]);
            origin = await startIdentityOrigin(`${first.url}/.well-known/jwks.json`, `https://localhost:${first.httpsPort}`);
            // A fresh store: the key is made sealed at the start.
            const fresh = keyRows(first);
            assert.deepEqual(fresh.clear, [], 'nothing in clear');
            assert.equal(fresh.sealed.length, 1);
            assert.match(fresh.sealed[0]!, /^v1\./);
            const bound = await startAgent(first, {
              token: first.token,
              target: origin.port,
              subdomain: 'signed',
              args: ['--oidc', PROVIDER],
            });
            agents.push(bound);
            const context = await browser.newContext({ ignoreHTTPSErrors: true });
            let cookie: string;
            try {
              const page = await context.newPage();
              await page.goto(`https://${bound.hostname}:${first.httpsPort}/echo`);
              await signInAtIdp(page, idp.issuer, 'sealed@example.com', bound.hostname);
              cookie = (await context.cookies()).find((c) => c.name === '__Host-svc_session')!.value;
            } finally {
              await context.close();
            }
            await bound.close();
            await first.close({ keepData: true });

            // The same session as a version before 023 would have signed it, with its clear key.
            const clearKey = randomBytes(32);
            backBefore023(first, clearKey);
            const payload = cookie.split('.')[0]!;
            const oldCookie = `${payload}.${createHmac('sha256', clearKey).update(payload).digest('base64url')}`;

            const second = await restart();
            const back = await startAgent(second, {
              token: first.token,
              target: origin.port,
              subdomain: 'signed',
              args: ['--oidc', PROVIDER],
            });
            agents.push(back);
            const answer = await visitFrom(second, back.hostname, '/echo', {
              headers: { accept: 'application/json', cookie: `__svc_session=${oldCookie}` },
            });
            assert.equal(answer.status, 200, answer.text.slice(0, 300));
            const echo = JSON.parse(answer.text) as IdentityEcho;
            assert.equal(echo.identity?.email, 'sealed@example.com', 'the cookie made with the clear key still signs the visitor in');
            const upgraded = keyRows(second);
            assert.deepEqual(upgraded.clear, [], 'the clear row is deleted');
            assert.equal(upgraded.sealed.length, 1);
            assert.match(upgraded.sealed[0]!, /^v1\./);
            assert.ok(!upgraded.sealed[0]!.includes(clearKey.toString('base64url')), 'the key is not readable in the row');
            await back.close();
          },
          { env: { SVC_OIDC_PROVIDERS: idp.providersEnv(PROVIDER) } },
        );
      },
    );
  });
}
