import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApiFixture, type ApiFixture } from './test-support.js';

// What POST /v1/webhooks says about a receiver URL it refuses. The address check is a stub here
// (no DNS); address-guard.test.ts covers the real one.

describe('POST /v1/webhooks receiver checks', () => {
  let api: ApiFixture;
  before(async () => {
    api = await startApiFixture({
      webhooks: {
        privateAddressProblem: (host) =>
          Promise.resolve(
            host === 'private.example'
              ? { kind: 'private', reason: `${host} resolves to 10.0.0.7` }
              : host === 'nowhere.example'
                ? { kind: 'unresolvable', reason: `${host} does not resolve` }
                : undefined,
          ),
      },
    });
  });
  after(() => api.close());

  const refusal = async (url: string): Promise<{ status: number; error: string; message: string }> => {
    const res = await api.call('POST', '/v1/webhooks', { body: { url } });
    const body = res.body as { error: string; message: string };
    return { status: res.status, error: body.error, message: body.message };
  };

  it('refuses port 0 as webhook_url_invalid, saying why', async () => {
    assert.deepEqual(await refusal('https://example.com:0/hooks'), {
      status: 400,
      error: 'webhook_url_invalid',
      message: 'url has port 0, which no receiver can listen on; leave the port out for the default, or give one from 1 to 65535.',
    });
  });

  it('accepts an explicit port', async () => {
    const res = await api.call('POST', '/v1/webhooks', { body: { url: 'https://example.com:8443/hooks' } });
    assert.equal(res.status, 201, res.text);
  });

  it('refuses a private receiver as webhook_url_private, naming the host', async () => {
    assert.deepEqual(await refusal('https://private.example/hooks'), {
      status: 400,
      error: 'webhook_url_private',
      message: 'webhooks cannot be sent to private.example: private.example resolves to 10.0.0.7.',
    });
  });

  it('refuses a host name that does not resolve as webhook_url_unresolvable, naming the host', async () => {
    assert.deepEqual(await refusal('https://nowhere.example:8443/hooks'), {
      status: 400,
      error: 'webhook_url_unresolvable',
      message: 'webhooks cannot be sent to nowhere.example:8443: nowhere.example does not resolve.',
    });
  });
});
