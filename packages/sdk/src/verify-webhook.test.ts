import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError } from './verify-webhook.js';

// verifyWebhook must accept exactly what the Standard Webhooks reference package signs.

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const body = JSON.stringify({ id: 'evt_1', type: 'tunnel.offline', createdAt: '2026-12-05T08:00:00.000Z', data: { id: 'tun_1' } });

function signed(at: Date, payload = body): Record<string, string> {
  const signature = new Webhook(secret).sign('evt_1', at, payload);
  return { 'webhook-id': 'evt_1', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
}

describe('verifyWebhook', () => {
  it('accepts a delivery signed by the standardwebhooks package and returns its event', () => {
    const event = verifyWebhook(secret, body, signed(new Date()));
    assert.equal(event.type, 'tunnel.offline');
    assert.deepEqual(event.data, { id: 'tun_1' });
  });

  it('reads fetch Headers and a Buffer body as well', () => {
    const event = verifyWebhook(secret, Buffer.from(body), new Headers(signed(new Date())));
    assert.equal(event.id, 'evt_1');
  });

  it('refuses a changed body, another secret, a stale timestamp and missing headers', () => {
    const headers = signed(new Date());
    assert.throws(() => verifyWebhook(secret, body.replace('tun_1', 'tun_2'), headers), WebhookVerificationError);
    assert.throws(() => verifyWebhook(`whsec_${randomBytes(32).toString('base64')}`, body, headers), WebhookVerificationError);
    assert.throws(() => verifyWebhook(secret, body, signed(new Date(Date.now() - 600_000))), /too far from now/);
    assert.throws(() => verifyWebhook(secret, body, { 'webhook-id': 'evt_1' }), /missing/);
  });
});
