import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { InspectedRequest } from '@svcrouter/sdk';
import type { Browser } from 'playwright-core';
import { launchChromium, requireChromium } from './harness/browser.js';
import { serverSuite, startAgent, visit } from './harness/index.js';

// The inspector's web UI in a real browser: live requests, replay with an edit, and the diff;
// and what a hostile page can do to it from the same browser (DNS rebinding, a cross-site replay).

/** Names of a hostile site; Chromium resolves them to loopback, as a rebinding DNS server would. */
const ATTACKER = 'attacker.test';
if (requireChromium('the local inspector in Chromium')) {
  describe('local inspector UI', () => {
    const system = serverSuite();
    let browser: Browser;
    before(async () => {
      browser = await launchChromium([`--host-resolver-rules=MAP ${ATTACKER} 127.0.0.1,MAP *.${ATTACKER} 127.0.0.1`]);
    });
    after(async () => {
      await browser?.close();
    });

    it('a request shows up live; an edited replay shows the new response beside the original, with a diff', async () => {
      const { server, origin } = system;
      const agent = await startAgent(server, { token: server.token, target: origin.port, args: ['--inspect-addr', '127.0.0.1:0'] });
      const inspector = (await agent.proc.waitForLine(/^Inspector (http:\/\/127\.0\.0\.1:\d+)$/))[1]!;
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      try {
        await page.goto(inspector);
        await page.locator('#live', { hasText: 'live' }).waitFor();
        await page.locator('#tunnels', { hasText: agent.url }).waitFor();

        await visit(server, agent.hostname, '/echo?from=visitor', {
          method: 'POST',
          body: '{"greeting":"hello"}',
          headers: { 'content-type': 'application/json' },
        });
        const row = page.locator('#requests li', { hasText: '/echo?from=visitor' });
        await row.waitFor();
        assert.equal(await row.locator('.s2').textContent(), '200');
        await row.click();
        await page.locator('#summary', { hasText: 'POST /echo?from=visitor → 200' }).waitFor();
        // The JSON body is pretty-printed; the hex view is one click away.
        assert.match((await page.locator('#request-body pre').textContent())!, /\{\n {2}"greeting": "hello"\n\}/);
        await page.locator('#request-body button', { hasText: 'Hex' }).click();
        assert.match((await page.locator('#request-body pre').textContent())!, /^00000000 {2}7b 22 67 72/);

        await page.locator('#edit').click();
        await page.locator('#edit-body').fill('{"greeting":"edited in the inspector"}');
        await page.locator('#edit-path').fill('/echo?from=replay');
        await page.locator('#send').click();

        await page.locator('#comparison').waitFor();
        await page.locator('#replay-summary', { hasText: 'POST /echo?from=replay → 200' }).waitFor();
        assert.equal(await page.locator('#editor').isVisible(), false, 'the editor closes once the replay is back');
        assert.match((await page.locator('#original-response').textContent())!, /"url": "\/echo\?from=visitor"/);
        assert.match((await page.locator('#replayed-response').textContent())!, /"url": "\/echo\?from=replay"/);
        const marks = (await page.locator('#diff span').allTextContents()).map((line) => line[0]).join('');
        assert.match(marks, /-+\++/, 'a changed line shows its removal, then its addition');
        const removed = await page.locator('#diff .del').allTextContents();
        const added = await page.locator('#diff .add').allTextContents();
        assert.ok(
          removed.some((line) => line.includes('/echo?from=visitor')),
          removed.join(''),
        );
        assert.ok(
          added.some((line) => line.includes('/echo?from=replay')),
          added.join(''),
        );
        await page.locator('#requests li', { hasText: '↻ /echo?from=replay' }).waitFor();
        assert.equal(origin.seen.at(-1)!.url, '/echo?from=replay');
        // A body over the capture limit (64 KiB by default) says how much of it was kept.
        await visit(server, agent.hostname, '/echo?large=1', {
          method: 'POST',
          body: 'x'.repeat(70_000),
          headers: { 'content-type': 'text/plain' },
        });
        await page.locator('#requests li', { hasText: '/echo?large=1' }).click();
        await page.locator('#request-body .note', { hasText: 'truncated: 65536 of 70000 bytes kept' }).waitFor();
        assert.equal((await page.locator('#request-body pre').textContent())!.length, 65_536, 'the kept part, shown as text');
        assert.deepEqual(problems, [], 'no script errors and no CSP violations');
      } finally {
        await page.close();
        await agent.close();
      }
    });

    it('a name rebound to loopback gets 403 on the page and the API; a page of another site cannot replay', async () => {
      const { server, origin } = system;
      const agent = await startAgent(server, { token: server.token, target: origin.port, args: ['--inspect-addr', '127.0.0.1:0'] });
      const inspector = (await agent.proc.waitForLine(/^Inspector (http:\/\/127\.0\.0\.1:\d+)$/))[1]!;
      const port = new URL(inspector).port;
      const attackerSite = http.createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>attacker</title>');
      });
      await new Promise<void>((resolve) => attackerSite.listen(0, '127.0.0.1', resolve));
      const attackerUrl = `http://${ATTACKER}:${(attackerSite.address() as AddressInfo).port}`;
      const page = await browser.newPage();
      try {
        await visit(server, agent.hostname, '/echo?from=visitor');
        const listed = async (): Promise<InspectedRequest[]> =>
          ((await (await fetch(`${inspector}/api/requests`)).json()) as { requests: InspectedRequest[] }).requests;
        const [captured] = await listed();
        assert.equal(captured?.path, '/echo?from=visitor');

        // DNS rebinding: the attacker's own name, now resolving to loopback, on the inspector's port.
        const rebound = await page.goto(`http://rebind.${ATTACKER}:${port}/`);
        assert.equal(rebound!.status(), 403);
        assert.equal(await page.locator('#requests').count(), 0, 'no inspector UI under a foreign name');
        assert.equal(await page.evaluate(async () => (await fetch('/api/requests')).status), 403);

        // Another site posts a bodiless replay, a request any page may send without asking (no
        // preflight); without the Origin check it would be replayed as it was.
        await page.goto(attackerUrl);
        const seen = origin.seen.length;
        const replay = `${inspector}/api/requests/${captured.id}/replay`;
        const post = (url: string) => fetch(url, { method: 'POST', mode: 'no-cors' }).then(() => undefined);
        const refused = page.waitForResponse(replay);
        await page.evaluate(post, replay);
        assert.equal((await refused).status(), 403);
        assert.equal(origin.seen.length, seen, 'the replay never reached the local service');
        assert.deepEqual(
          (await listed()).map((request) => request.id),
          [captured.id],
          'nothing new was captured',
        );
        // The very same request from the inspector's own page is a replay: the Origin decided.
        await page.goto(inspector);
        const allowed = page.waitForResponse(replay);
        await page.evaluate(post, replay);
        assert.equal((await allowed).status(), 200);
        assert.equal(origin.seen.length, seen + 1);
        assert.equal((await listed()).length, 2);
      } finally {
        await page.close();
        await new Promise<void>((resolve) => attackerSite.close(() => resolve()));
        await agent.close();
      }
    });
  });
}
