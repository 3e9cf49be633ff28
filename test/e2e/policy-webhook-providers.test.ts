import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sign as signGithub } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import twilio from 'twilio';
import { edgeUrl, startAgent, startOrigin, startServer, visit, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';

// Webhook signatures checked at the edge: a real svc-server, one real agent per provider with
// --verify-webhook, requests signed by each provider's own npm package (GitHub, Stripe, Twilio,
// Standard Webhooks) or documented recipe (Slack, Shopify). Signed requests reach the local
// service unchanged; a stale timestamp, a changed body or a missing header is a 403 naming the
// reason, and a body over --verify-webhook-max-body a 413, and none of them reaches it.

const WEBHOOK_MAX_BODY = 1024;

interface Signed {
  path: string;
  headers: Record<string, string>;
  body: string;
}

interface Provider {
  name: 'github' | 'stripe' | 'slack' | 'shopify' | 'twilio' | 'standard';
  secret: string;
  /** A request signed at `timestampS` (ignored by providers that sign no timestamp) for the tunnel at `url`. */
  sign(url: (path: string) => string, timestampS: number): Promise<Signed>;
  /** The signature's own header, which must reach the local service unchanged. */
  signatureHeader: string;
  signsTimestamp: boolean;
}

const JSON_BODY = JSON.stringify({ id: 'evt_1', object: 'event', note: 'héllo wörld', items: [1, 2, 3] });

const PROVIDERS: Provider[] = [
  {
    name: 'github',
    secret: 'gh-e2e-secret',
    signatureHeader: 'x-hub-signature-256',
    signsTimestamp: false,
    sign: async (_url, _t, body = JSON_BODY) => ({
      path: '/echo?source=github',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-hub-signature-256': await signGithub('gh-e2e-secret', body),
      },
      body,
    }),
  },
  {
    name: 'stripe',
    secret: 'whsec_e2e_stripe_secret',
    signatureHeader: 'stripe-signature',
    signsTimestamp: true,
    sign: async (_url, timestamp) => ({
      path: '/echo',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: JSON_BODY, secret: 'whsec_e2e_stripe_secret', timestamp }),
      },
      body: JSON_BODY,
    }),
  },
  {
    name: 'slack',
    secret: 'slack-e2e-signing-secret',
    signatureHeader: 'x-slack-signature',
    signsTimestamp: true,
    // Slack's documented recipe: "v0=" + hex HMAC-SHA256 of "v0:<timestamp>:<body>".
    sign: async (_url, timestamp) => {
      const body = 'token=x&team_id=T1&command=%2Fdeploy&text=now+please';
      const signature = `v0=${createHmac('sha256', 'slack-e2e-signing-secret').update(`v0:${timestamp}:${body}`).digest('hex')}`;
      return {
        path: '/echo',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-slack-request-timestamp': String(timestamp),
          'x-slack-signature': signature,
        },
        body,
      };
    },
  },
  {
    name: 'shopify',
    secret: 'shpss_e2e_client_secret',
    signatureHeader: 'x-shopify-hmac-sha256',
    signsTimestamp: false,
    // Shopify's documented recipe: base64 HMAC-SHA256 of the raw body with the app's client secret.
    sign: async () => ({
      path: '/echo',
      headers: {
        'content-type': 'application/json',
        'x-shopify-topic': 'orders/create',
        'x-shopify-hmac-sha256': createHmac('sha256', 'shpss_e2e_client_secret').update(JSON_BODY).digest('base64'),
      },
      body: JSON_BODY,
    }),
  },
  {
    name: 'twilio',
    secret: 'twilio-e2e-auth-token-0123456789',
    signatureHeader: 'x-twilio-signature',
    signsTimestamp: false,
    sign: async (url) => {
      const params = { Body: 'Hello + good bye', From: '+15005550006', MessageSid: 'SM123', To: '+15005550001' };
      const path = '/echo?tenant=acme';
      return {
        path,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': twilio.getExpectedTwilioSignature('twilio-e2e-auth-token-0123456789', url(path), params),
        },
        body: new URLSearchParams(params).toString(),
      };
    },
  },
  {
    name: 'standard',
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    signatureHeader: 'webhook-signature',
    signsTimestamp: true,
    sign: async (_url, timestamp) => {
      const id = 'msg_e2e_1';
      return {
        path: '/echo',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': new Webhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').sign(id, new Date(timestamp * 1000), JSON_BODY),
        },
        body: JSON_BODY,
      };
    },
  },
];

interface Echo {
  method: string;
  url: string;
  headers: Record<string, string>;
  bodySha256: string;
  bodyLength: number;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const nowS = (): number => Math.floor(Date.now() / 1000);

describe('webhook signatures of each provider, checked at the edge', { timeout: 120_000 }, () => {
  let server: TestServer;
  let origin: TestOrigin;
  const agents = new Map<string, TestAgent>();

  before(async () => {
    server = await startServer();
    origin = await startOrigin();
    await Promise.all(
      PROVIDERS.map(async (provider) => {
        const args = ['--verify-webhook', `${provider.name}:${provider.secret}`, '--verify-webhook-max-body', `${WEBHOOK_MAX_BODY}`];
        agents.set(
          provider.name,
          await startAgent(server, { token: server.token, target: origin.port, subdomain: `hook-${provider.name}`, args }),
        );
      }),
    );
  });
  after(async () => {
    await Promise.all([...agents.values()].map((agent) => agent.close()));
    await origin?.close();
    await server?.close();
  });

  const send = (provider: Provider, signed: Signed) =>
    visit(server, agents.get(provider.name)!.hostname, signed.path, { method: 'POST', headers: signed.headers, body: signed.body });
  const urlOf = (provider: Provider) => (path: string) => edgeUrl(server, agents.get(provider.name)!.hostname, path);

  for (const provider of PROVIDERS) {
    describe(provider.name, () => {
      it('forwards a request signed as the provider signs it, body and headers unchanged', async () => {
        const signed = await provider.sign(urlOf(provider), nowS());
        const answer = await send(provider, signed);
        assert.equal(answer.status, 200, answer.text);
        const echo = JSON.parse(answer.text) as Echo;
        assert.equal(echo.method, 'POST');
        assert.equal(echo.url, signed.path);
        assert.equal(echo.bodyLength, Buffer.byteLength(signed.body));
        assert.equal(echo.bodySha256, sha256(signed.body));
        assert.equal(echo.headers[provider.signatureHeader], signed.headers[provider.signatureHeader]);
      });

      it('refuses a changed body with 403 "signature mismatch", before the local service', async () => {
        const signed = await provider.sign(urlOf(provider), nowS());
        const seen = origin.seen.length;
        const answer = await send(provider, { ...signed, body: signed.body.replace(/e/, 'E') });
        assert.equal(answer.status, 403);
        assert.match(answer.text, /signature mismatch/);
        assert.equal(origin.seen.length, seen);
      });

      it('refuses a request without the signature header with 403 "missing signature", before the local service', async () => {
        const signed = await provider.sign(urlOf(provider), nowS());
        const headers = { ...signed.headers };
        delete headers[provider.signatureHeader];
        const seen = origin.seen.length;
        const answer = await send(provider, { ...signed, headers });
        assert.equal(answer.status, 403);
        assert.match(answer.text, /missing signature/);
        assert.equal(origin.seen.length, seen);
      });

      if (provider.signsTimestamp) {
        it('refuses a replay signed 6 minutes ago with 403 "timestamp outside tolerance", before the local service', async () => {
          const signed = await provider.sign(urlOf(provider), nowS() - 360);
          const seen = origin.seen.length;
          const answer = await send(provider, signed);
          assert.equal(answer.status, 403);
          assert.match(answer.text, /timestamp outside tolerance/);
          assert.equal(origin.seen.length, seen);
        });
      }
    });
  }
});
