import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import twilio from 'twilio';
import { verifyWebhookSignature, type SignedRequest } from './webhook-signatures.js';

// Twilio's signatures are made by the twilio package's getExpectedTwilioSignature, the function
// its own validateRequest checks against.

const NOW_MS = Date.UTC(2026, 11, 6, 2, 0, 0);
const TOKEN = '12345abcde12345abcde12345abcde12';
const FORM_URL = 'https://mycompany.example.test/myapp.php?foo=1&bar=2';
const PARAMS = { CallSid: 'CA1234567890ABCDE', Caller: '+12349013030', Digits: '1234', From: '+12349013030', To: '+18005551212' };

const formRequest = (url: string, body: string, signature: string | undefined, extra: Record<string, string> = {}): SignedRequest => ({
  url,
  method: 'POST',
  headers: {
    'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
    ...(signature === undefined ? {} : { 'x-twilio-signature': signature }),
    ...extra,
  },
  body: Buffer.from(body),
});

const formBody = (params: Record<string, string>): string => new URLSearchParams(params).toString();

describe('twilio (X-Twilio-Signature, signed by twilio.getExpectedTwilioSignature)', () => {
  test('a form POST signed over the URL and its sorted parameters passes, whatever the order on the wire', () => {
    const signature = twilio.getExpectedTwilioSignature(TOKEN, FORM_URL, PARAMS);
    const shuffled = Object.fromEntries(Object.entries(PARAMS).reverse());
    assert.equal(verifyWebhookSignature('twilio', TOKEN, formRequest(FORM_URL, formBody(shuffled), signature), NOW_MS), undefined);
    // Twilio's own validator accepts the same request.
    assert.equal(twilio.validateRequest(TOKEN, signature, FORM_URL, PARAMS), true);
  });

  test('values with spaces, plus signs, unicode and repeated names are decoded and sorted as Twilio signs them', () => {
    const body = 'Body=Hello+world+%2B+%C3%A9t%C3%A9&MediaUrl=b&MediaUrl=a&MediaUrl=b';
    const signature = twilio.getExpectedTwilioSignature(TOKEN, FORM_URL, { Body: 'Hello world + été', MediaUrl: ['b', 'a', 'b'] });
    assert.equal(verifyWebhookSignature('twilio', TOKEN, formRequest(FORM_URL, body, signature), NOW_MS), undefined);
  });

  test('the URL is accepted with or without its default port, as Twilio’s library does', () => {
    const signedWithPort = twilio.getExpectedTwilioSignature(TOKEN, 'https://mycompany.example.test:443/myapp.php?foo=1&bar=2', PARAMS);
    assert.equal(verifyWebhookSignature('twilio', TOKEN, formRequest(FORM_URL, formBody(PARAMS), signedWithPort), NOW_MS), undefined);
    const signedWithout = twilio.getExpectedTwilioSignature(TOKEN, FORM_URL, PARAMS);
    const withPort = 'https://mycompany.example.test:443/myapp.php?foo=1&bar=2';
    assert.equal(verifyWebhookSignature('twilio', TOKEN, formRequest(withPort, formBody(PARAMS), signedWithout), NOW_MS), undefined);
  });

  test('a JSON body is covered by the bodySHA256 query parameter and the URL alone is signed', () => {
    const body = '{"property":"value","boolean":true}';
    const url = `https://mycompany.example.test/myapp.php?bodySHA256=${createHash('sha256').update(body).digest('hex')}`;
    const signature = twilio.getExpectedTwilioSignature(TOKEN, url, {});
    const json = (payload: string): SignedRequest => ({
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-twilio-signature': signature },
      body: Buffer.from(payload),
    });
    assert.equal(verifyWebhookSignature('twilio', TOKEN, json(body), NOW_MS), undefined);
    assert.equal(twilio.validateRequestWithBody(TOKEN, signature, url, body), true);
    assert.equal(verifyWebhookSignature('twilio', TOKEN, json(body.replace('true', 'false')), NOW_MS), 'signature mismatch');
  });

  test('a GET is signed over its URL alone', () => {
    const url = 'https://mycompany.example.test/status?CallSid=CA1&CallStatus=completed';
    const signature = twilio.getExpectedTwilioSignature(TOKEN, url, {});
    assert.equal(
      verifyWebhookSignature(
        'twilio',
        TOKEN,
        { url, method: 'GET', headers: { 'x-twilio-signature': signature }, body: Buffer.alloc(0) },
        NOW_MS,
      ),
      undefined,
    );
  });

  test('a body that neither form parameters nor bodySHA256 cover is a mismatch, whatever the URL signature', () => {
    const url = 'https://mycompany.example.test/j';
    const signature = twilio.getExpectedTwilioSignature(TOKEN, url, {});
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const request = {
        url,
        method,
        headers: { 'content-type': 'application/json', 'x-twilio-signature': signature },
        body: Buffer.from('{"a":2}'),
      };
      assert.equal(verifyWebhookSignature('twilio', TOKEN, request, NOW_MS), 'signature mismatch', method);
    }
  });

  test('a SharedKey webhook signed with HMAC-SHA256 passes when its settings header says so', () => {
    const signature = twilio.getExpectedTwilioSignature(TOKEN, FORM_URL, PARAMS, 'HMAC_SHA256');
    const settings = { 'x-twilio-webhooks-signature-settings': 'key=webhooks_sharedkey_1,algorithm=HMAC_SHA256' };
    assert.equal(verifyWebhookSignature('twilio', TOKEN, formRequest(FORM_URL, formBody(PARAMS), signature, settings), NOW_MS), undefined);
    assert.equal(verifyWebhookSignature('twilio', TOKEN, formRequest(FORM_URL, formBody(PARAMS), signature), NOW_MS), 'signature mismatch');
    const unknown = { 'x-twilio-webhooks-signature-settings': 'algorithm=HMAC_MD5' };
    assert.equal(
      verifyWebhookSignature('twilio', TOKEN, formRequest(FORM_URL, formBody(PARAMS), signature, unknown), NOW_MS),
      'signature mismatch',
    );
  });

  test('a changed parameter, another URL, a wrong token and malformed headers are a mismatch', () => {
    const signature = twilio.getExpectedTwilioSignature(TOKEN, FORM_URL, PARAMS);
    assert.equal(
      verifyWebhookSignature('twilio', TOKEN, formRequest(FORM_URL, formBody({ ...PARAMS, Digits: '9' }), signature), NOW_MS),
      'signature mismatch',
    );
    assert.equal(
      verifyWebhookSignature('twilio', TOKEN, formRequest(FORM_URL.replace('foo=1', 'foo=2'), formBody(PARAMS), signature), NOW_MS),
      'signature mismatch',
    );
    assert.equal(
      verifyWebhookSignature('twilio', 'another-token', formRequest(FORM_URL, formBody(PARAMS), signature), NOW_MS),
      'signature mismatch',
    );
    for (const value of ['x', 'x'.repeat(10_000)]) {
      assert.equal(verifyWebhookSignature('twilio', TOKEN, formRequest(FORM_URL, formBody(PARAMS), value), NOW_MS), 'signature mismatch');
    }
    assert.equal(
      verifyWebhookSignature('twilio', TOKEN, formRequest('not a url', formBody(PARAMS), signature), NOW_MS),
      'signature mismatch',
    );
    assert.equal(
      verifyWebhookSignature('twilio', TOKEN, formRequest(FORM_URL, '%E0%A4%A=&&&==%%', signature), NOW_MS),
      'signature mismatch',
    );
  });

  test('no header is a missing signature', () => {
    assert.equal(verifyWebhookSignature('twilio', TOKEN, formRequest(FORM_URL, formBody(PARAMS), undefined), NOW_MS), 'missing signature');
  });
});
