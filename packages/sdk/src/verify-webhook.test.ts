import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
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

  it('refuses every other spelling of the signature: a last character changed within its spare bits, no padding, another version', () => {
    const headers = signed(new Date());
    const [version, value] = headers['webhook-signature']!.split(',') as [string, string];
    assert.equal(version, 'v1');
    // 32 bytes in base64: 43 characters and one '='; the 43rd carries 4 bits and 2 spare ones.
    assert.match(value, /^[A-Za-z0-9+/]{43}=$/);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const last = alphabet.indexOf(value[42]!);
    const spelling = (spare: number) => `${value.slice(0, 42)}${alphabet[(last & ~3) | spare]}=`;
    for (const spare of [0, 1, 2, 3].filter((bits) => bits !== (last & 3))) {
      assert.deepEqual(Buffer.from(spelling(spare), 'base64'), Buffer.from(value, 'base64'), 'the same bytes');
      assert.throws(() => verifyWebhook(secret, body, { ...headers, 'webhook-signature': `v1,${spelling(spare)}` }), /does not match/);
    }
    for (const other of [`v1,${value.slice(0, -1)}`, `v2,${value}`, `v1${value}`, value, 'v1,']) {
      assert.throws(() => verifyWebhook(secret, body, { ...headers, 'webhook-signature': other }), /does not match/, other);
    }
    assert.equal(
      verifyWebhook(secret, body, { ...headers, 'webhook-signature': `v1,bad v1,${value}` }).id,
      'evt_1',
      'one match of several',
    );
  });

  it("signs the body's bytes: a Buffer that is not UTF-8 verifies only as sent, and a signed body that is not JSON is refused", () => {
    const at = new Date();
    const raw = Buffer.concat([Buffer.from('{"id":"evt_1","x":"'), Buffer.from([0xff]), Buffer.from('"}')]);
    const headersFor = (payload: Buffer) => {
      const seconds = Math.floor(at.getTime() / 1000);
      const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
      const mac = createHmac('sha256', key).update(`evt_1.${seconds}.`).update(payload).digest('base64');
      return { 'webhook-id': 'evt_1', 'webhook-timestamp': String(seconds), 'webhook-signature': `v1,${mac}` };
    };
    assert.equal(verifyWebhook(secret, raw, headersFor(raw)).id, 'evt_1');
    const other = Buffer.from(raw);
    other[other.indexOf(0xff)] = 0xfe;
    assert.throws(() => verifyWebhook(secret, other, headersFor(raw)), /does not match/);
    const notJson = Buffer.from('not json');
    assert.throws(() => verifyWebhook(secret, notJson, headersFor(notJson)), /signed but is not JSON/);
  });
});
