import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { sign as signGithub } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { verifyWebhookSignature, webhookSecretProblem, type SignedRequest } from './webhook-signatures.js';

// Each provider's signatures are made by its own official package where one exists on npm
// (@octokit/webhooks-methods, stripe, standardwebhooks; twilio in webhook-twilio.test.ts), and
// by the provider's documented HMAC recipe for Slack and Shopify, which publish no signing helper.

const NOW_MS = Date.UTC(2026, 11, 6, 2, 0, 0);
const NOW_S = Math.floor(NOW_MS / 1000);
const STALE_S = NOW_S - 301;
const BODY = '{"id":"evt_1","object":"event","text":"héllo"}';

const request = (headers: Record<string, string>, body = BODY): SignedRequest => ({
  url: 'https://hooks.example.test/receive',
  method: 'POST',
  headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])),
  body: Buffer.from(body),
});

const without = (headers: Record<string, string>, name: string): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name));

describe('github (X-Hub-Signature-256, signed by @octokit/webhooks-methods)', () => {
  const secret = 'It’s a Secret to Everybody';
  const signed = async (body = BODY, key = secret) => ({ 'X-Hub-Signature-256': await signGithub(key, body) });

  test('a signed body passes', async () => {
    assert.equal(verifyWebhookSignature('github', secret, request(await signed()), NOW_MS), undefined);
  });
  test('a changed body, a wrong secret and a malformed header are a mismatch', async () => {
    assert.equal(verifyWebhookSignature('github', secret, request(await signed(), BODY + ' '), NOW_MS), 'signature mismatch');
    assert.equal(verifyWebhookSignature('github', secret, request(await signed(BODY, 'other')), NOW_MS), 'signature mismatch');
    for (const value of ['sha1=abc', 'sha256=', 'sha256=zz', (await signGithub(secret, BODY)).toUpperCase(), 'x'.repeat(10_000)]) {
      assert.equal(verifyWebhookSignature('github', secret, request({ 'X-Hub-Signature-256': value }), NOW_MS), 'signature mismatch');
    }
  });
  test('no header, or an empty one, is a missing signature', () => {
    assert.equal(verifyWebhookSignature('github', secret, request({}), NOW_MS), 'missing signature');
    assert.equal(verifyWebhookSignature('github', secret, request({ 'X-Hub-Signature-256': '' }), NOW_MS), 'missing signature');
  });
});

describe('stripe (Stripe-Signature, signed by stripe.webhooks.generateTestHeaderString)', () => {
  const secret = 'whsec_test_5ecret';
  const header = (timestamp = NOW_S, key = secret, payload = BODY) =>
    Stripe.webhooks.generateTestHeaderString({ payload, secret: key, timestamp });

  test('a signed body passes, also within 5 minutes either way', () => {
    assert.equal(verifyWebhookSignature('stripe', secret, request({ 'Stripe-Signature': header() }), NOW_MS), undefined);
    assert.equal(verifyWebhookSignature('stripe', secret, request({ 'Stripe-Signature': header(NOW_S - 300) }), NOW_MS), undefined);
    assert.equal(verifyWebhookSignature('stripe', secret, request({ 'Stripe-Signature': header(NOW_S + 300) }), NOW_MS), undefined);
  });
  test('a stale timestamp is outside tolerance', () => {
    assert.equal(
      verifyWebhookSignature('stripe', secret, request({ 'Stripe-Signature': header(STALE_S) }), NOW_MS),
      'timestamp outside tolerance',
    );
    assert.equal(
      verifyWebhookSignature('stripe', secret, request({ 'Stripe-Signature': header(NOW_S + 301) }), NOW_MS),
      'timestamp outside tolerance',
    );
  });
  test('several v1 signatures while a secret is rolled: one valid is enough, v0 is ignored', () => {
    const good = header().split(',v1=')[1]!;
    const other = header(NOW_S, 'whsec_old').split(',v1=')[1]!;
    assert.equal(
      verifyWebhookSignature('stripe', secret, request({ 'Stripe-Signature': `t=${NOW_S},v1=${other},v1=${good}` }), NOW_MS),
      undefined,
    );
    assert.equal(
      verifyWebhookSignature('stripe', secret, request({ 'Stripe-Signature': `t=${NOW_S},v1=${other},v0=${good}` }), NOW_MS),
      'signature mismatch',
    );
  });
  test('a changed body, a wrong secret, a changed timestamp and malformed headers are a mismatch', () => {
    assert.equal(
      verifyWebhookSignature('stripe', secret, request({ 'Stripe-Signature': header() }, BODY + ' '), NOW_MS),
      'signature mismatch',
    );
    assert.equal(
      verifyWebhookSignature('stripe', secret, request({ 'Stripe-Signature': header(NOW_S, 'whsec_other') }), NOW_MS),
      'signature mismatch',
    );
    // A replay whose t was moved into the window no longer matches its signature.
    const moved = header(STALE_S).replace(`t=${STALE_S}`, `t=${NOW_S}`);
    assert.equal(verifyWebhookSignature('stripe', secret, request({ 'Stripe-Signature': moved }), NOW_MS), 'signature mismatch');
    for (const value of ['garbage', `t=${NOW_S}`, 'v1=abc', `t=abc,v1=${'0'.repeat(64)}`, ',,,=,=', `t=${NOW_S},${'v1=x,'.repeat(2000)}`]) {
      assert.equal(
        verifyWebhookSignature('stripe', secret, request({ 'Stripe-Signature': value }), NOW_MS),
        'signature mismatch',
        value.slice(0, 40),
      );
    }
  });
  test('no header is a missing signature', () => {
    assert.equal(verifyWebhookSignature('stripe', secret, request({}), NOW_MS), 'missing signature');
  });
});

describe('slack (X-Slack-Signature, by the documented v0 recipe)', () => {
  const secret = '8f742231b10e8888abcd99yyyzzz85a5';
  // Slack's recipe: basestring "v0:" + timestamp + ":" + body, HMAC-SHA256 with the signing secret, "v0=" + hex.
  const headers = (timestamp = NOW_S, key = secret, body = BODY) => ({
    'X-Slack-Request-Timestamp': String(timestamp),
    'X-Slack-Signature': `v0=${createHmac('sha256', key).update(`v0:${timestamp}:${body}`).digest('hex')}`,
  });

  test('a signed body passes', () => {
    assert.equal(verifyWebhookSignature('slack', secret, request(headers()), NOW_MS), undefined);
  });
  test('a stale timestamp is outside tolerance', () => {
    assert.equal(verifyWebhookSignature('slack', secret, request(headers(STALE_S)), NOW_MS), 'timestamp outside tolerance');
  });
  test('a changed body, a wrong secret and malformed headers are a mismatch', () => {
    assert.equal(verifyWebhookSignature('slack', secret, request(headers(), 'token=x'), NOW_MS), 'signature mismatch');
    assert.equal(verifyWebhookSignature('slack', secret, request(headers(NOW_S, 'other')), NOW_MS), 'signature mismatch');
    const signature = headers()['X-Slack-Signature'];
    for (const value of [signature.replace('v0=', 'v1='), signature.slice(3), 'v0=']) {
      assert.equal(
        verifyWebhookSignature('slack', secret, request({ ...headers(), 'X-Slack-Signature': value }), NOW_MS),
        'signature mismatch',
      );
    }
    assert.equal(
      verifyWebhookSignature('slack', secret, request({ ...headers(), 'X-Slack-Request-Timestamp': String(NOW_S + 1) }), NOW_MS),
      'signature mismatch',
    );
  });
  test('either header missing is a missing signature', () => {
    assert.equal(verifyWebhookSignature('slack', secret, request(without(headers(), 'X-Slack-Signature')), NOW_MS), 'missing signature');
    assert.equal(
      verifyWebhookSignature('slack', secret, request(without(headers(), 'X-Slack-Request-Timestamp')), NOW_MS),
      'missing signature',
    );
  });
});

describe('shopify (X-Shopify-Hmac-Sha256, by the documented recipe)', () => {
  const secret = 'shpss_client_secret';
  // Shopify's recipe: base64 of HMAC-SHA256 of the raw body, keyed by the app's client secret.
  const headers = (key = secret, body = BODY) => ({
    'X-Shopify-Hmac-Sha256': createHmac('sha256', key).update(body, 'utf8').digest('base64'),
  });

  test('a signed body passes', () => {
    assert.equal(verifyWebhookSignature('shopify', secret, request(headers()), NOW_MS), undefined);
  });
  test('a changed body, a wrong secret and a malformed header are a mismatch', () => {
    assert.equal(verifyWebhookSignature('shopify', secret, request(headers(), BODY.replace('1', '2')), NOW_MS), 'signature mismatch');
    assert.equal(verifyWebhookSignature('shopify', secret, request(headers('other')), NOW_MS), 'signature mismatch');
    const hex = createHmac('sha256', secret).update(BODY).digest('hex');
    assert.equal(verifyWebhookSignature('shopify', secret, request({ 'X-Shopify-Hmac-Sha256': hex }), NOW_MS), 'signature mismatch');
    assert.equal(verifyWebhookSignature('shopify', secret, request({ 'X-Shopify-Hmac-Sha256': '@@@' }), NOW_MS), 'signature mismatch');
  });
  test('no header is a missing signature', () => {
    assert.equal(verifyWebhookSignature('shopify', secret, request({}), NOW_MS), 'missing signature');
  });
});

describe('standard (webhook-signature, signed by the standardwebhooks package)', () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const headers = (timestampS = NOW_S, key = secret, id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W') => ({
    'webhook-id': id,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': new Webhook(key).sign(id, new Date(timestampS * 1000), BODY),
  });

  test('a signed body passes', () => {
    assert.equal(verifyWebhookSignature('standard', secret, request(headers()), NOW_MS), undefined);
  });
  test('a stale timestamp is outside tolerance', () => {
    assert.equal(verifyWebhookSignature('standard', secret, request(headers(STALE_S)), NOW_MS), 'timestamp outside tolerance');
  });
  test('several signatures while a secret is rotated: one valid is enough', () => {
    const good = headers();
    const old = headers(NOW_S, 'whsec_' + Buffer.from('an older secret').toString('base64'));
    const list = `v1a,ignored ${old['webhook-signature']} ${good['webhook-signature']}`;
    assert.equal(verifyWebhookSignature('standard', secret, request({ ...good, 'webhook-signature': list }), NOW_MS), undefined);
  });
  test('a changed body, a wrong secret, another id and malformed headers are a mismatch', () => {
    assert.equal(verifyWebhookSignature('standard', secret, request(headers(), '{}'), NOW_MS), 'signature mismatch');
    assert.equal(
      verifyWebhookSignature('standard', secret, request(headers(NOW_S, 'whsec_' + Buffer.from('wrong').toString('base64'))), NOW_MS),
      'signature mismatch',
    );
    assert.equal(
      verifyWebhookSignature('standard', secret, request({ ...headers(), 'webhook-id': 'msg_other' }), NOW_MS),
      'signature mismatch',
    );
    for (const value of ['v1,', 'v2,abc', 'nonsense', ' '.repeat(100), 'v1,x '.repeat(1000)]) {
      assert.equal(
        verifyWebhookSignature('standard', secret, request({ ...headers(), 'webhook-signature': value }), NOW_MS),
        'signature mismatch',
      );
    }
  });
  test('any of the three headers missing is a missing signature', () => {
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      assert.equal(verifyWebhookSignature('standard', secret, request(without(headers(), name)), NOW_MS), 'missing signature', name);
    }
  });
});

test('a header repeated into an array is read as Node joins it, so it does not verify', async () => {
  const signature = await signGithub('s', BODY);
  const repeated: SignedRequest = { ...request({}), headers: { 'x-hub-signature-256': [signature, signature] } };
  assert.equal(verifyWebhookSignature('github', 's', repeated, NOW_MS), 'signature mismatch');
  const once: SignedRequest = { ...request({}), headers: { 'x-hub-signature-256': [signature] } };
  assert.equal(verifyWebhookSignature('github', 's', once, NOW_MS), undefined);
});

test('secrets: empty ones and Standard Webhooks secrets that are not whsec_ base64 are refused', () => {
  assert.equal(webhookSecretProblem('github', 'x'), undefined);
  assert.equal(webhookSecretProblem('github', ''), 'the secret is empty');
  assert.equal(webhookSecretProblem('standard', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'), undefined);
  assert.equal(webhookSecretProblem('standard', 'whsec_not base64!'), 'a Standard Webhooks secret is whsec_ followed by base64');
  assert.equal(webhookSecretProblem('standard', 'whsec_'), 'a Standard Webhooks secret is whsec_ followed by base64');
});
