import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium, requireChromium } from './harness/browser.js';
import { serverSuite, startAgent, visit } from './harness/index.js';

// The inspector's web UI in a real browser: live requests, replay with an edit, and the diff.
if (requireChromium('the local inspector in Chromium')) {
  describe('local inspector UI', () => {
    const system = serverSuite();
    let browser: Browser;
    before(async () => {
      browser = await launchChromium();
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
        assert.deepEqual(problems, [], 'no script errors and no CSP violations');
      } finally {
        await page.close();
        await agent.close();
      }
    });
  });
}
