import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { captureViewports, launchChromium, requireChromium, VIEWPORTS } from './harness/browser.js';
import { startServer, type TestServer } from './harness/index.js';
import { createTokenInUi, openPage, rowWith, signUp, watchPageErrors } from './harness/dashboard-support.js';
import { startReceiver, type Receiver } from './harness/webhook-support.js';

// The dashboard's Webhooks page in Chromium against a real svc-server and a real receiver:
// add a webhook (its secret shown once), see an event delivered, its attempts, resend it, delete.

if (requireChromium('dashboard webhooks')) {
  describe('dashboard Webhooks page in Chromium', () => {
    let server: TestServer;
    let receiver: Receiver;
    let browser: Browser;
    let page: Page;
    let pageErrors: string[];

    before(async () => {
      server = await startServer({ env: { SVC_WEBHOOK_ALLOW_PRIVATE: 'true' } });
      receiver = await startReceiver();
      browser = await launchChromium();
      const context = await browser.newContext({ baseURL: server.url, viewport: VIEWPORTS.desktop });
      page = await context.newPage();
      pageErrors = watchPageErrors(page);
      await signUp(page, `hooks-${randomBytes(4).toString('hex')}@example.com`, 'webhooks-password-1');
    });
    after(async () => {
      await browser?.close();
      await receiver?.close();
      await server?.close();
    });

    it('adds a webhook for chosen events and shows its signing secret once', async () => {
      await openPage(page, 'Webhooks');
      await page.getByText('No webhooks yet').waitFor();
      await page.getByLabel('Receiver URL', { exact: true }).fill(receiver.url);
      await page.getByLabel('key.created', { exact: true }).check();
      await page.getByRole('button', { name: 'Add webhook', exact: true }).click();
      const secret = (await page.getByTestId('new-webhook-secret').textContent())?.trim() ?? '';
      assert.match(secret, /^whsec_/);
      receiver.secret = secret;
      await rowWith(page, receiver.url).getByText('key.created').waitFor();
      await captureViewports(page, 'webhooks-added');
    });

    it('shows the delivery of a real event with its attempt, and resends it', async () => {
      await createTokenInUi(page, 'from the dashboard');
      const got = await receiver.next((r) => r.type === 'key.created');
      assert.equal(got.verified, true);
      assert.equal(got.envelope.data.description, 'from the dashboard');

      await openPage(page, 'Webhooks');
      await rowWith(page, receiver.url).getByTestId('last-delivery').getByText('key.created: delivered').waitFor();
      await rowWith(page, receiver.url).getByRole('button', { name: 'Deliveries', exact: true }).click();
      const deliveries = page.getByRole('region', { name: 'Deliveries' });
      await deliveries.getByTestId('delivery-state').getByText('delivered').waitFor();
      await deliveries.getByText(/: 200/).first().waitFor();
      await captureViewports(page, 'webhooks-deliveries');

      await deliveries.getByRole('button', { name: 'Resend', exact: true }).click();
      await receiver.next((r) => r !== got && r.id === got.id);
      await deliveries.locator('.attempt').nth(1).waitFor();
      assert.equal(receiver.deliveredCounts().get(got.id), 2, 'resent on request, with the same webhook-id');
    });

    it('deletes the webhook after confirmation', async () => {
      await rowWith(page, receiver.url).getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByText('No webhooks yet').waitFor();
      assert.deepEqual(pageErrors, []);
    });
  });
}
