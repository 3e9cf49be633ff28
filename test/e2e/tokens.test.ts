import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Messages } from '@svcrouter/protocol';
import { api, runAgent, splitFailure, startAgent, startOrigin, startServer, type TestOrigin, type TestServer } from './harness/index.js';
import { revokeToken } from './harness/lifecycle-support.js';

/** A token of the right shape that no account holds. */
function unknownToken(): string {
  return `svc_${randomBytes(32).toString('base64url')}`;
}

describe('agent token checks', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let valid: string;
  let revoked: string;

  before(async () => {
    server = await startServer();
    origin = await startOrigin();
    valid = server.token!;
    revoked = await server.createAccount('revoked@example.com');
    await revokeToken(server.dataDir, revoked);
  });
  after(async () => {
    await origin?.close();
    await server?.close();
  });

  const badTokens: Array<[string, () => string | undefined]> = [
    ['missing', () => undefined],
    ['empty', () => ''],
    ['wrapped in double quotes', () => `"${valid}"`],
    ['wrapped in single quotes', () => `'${valid}'`],
    ['padded with a leading space', () => ` ${valid}`],
    ['padded with a trailing space', () => `${valid} `],
    ['padded with a leading newline', () => `\n${valid}`],
    ['padded with a trailing newline', () => `${valid}\n`],
    ['of another prefix (sk_)', () => `sk_${valid.slice(4)}`],
    ['well-formed but unknown', () => unknownToken()],
    ['revoked', () => revoked],
  ];
  for (const [name, token] of badTokens) {
    it(`svc http with a token ${name} prints exactly the token message, a hint, and exits 1`, async () => {
      const env: Record<string, string | undefined> = { SVC_SERVER: server.url };
      const value = token();
      if (value !== undefined) env.SVC_TOKEN = value;
      const result = await runAgent(['http', String(origin.port)], env);
      const failure = splitFailure(result.stderr);
      assert.equal(failure.sentence, Messages.TOKEN_INVALID);
      assert.match(failure.hint, /SVC_TOKEN/);
      assert.equal(result.stdout, '');
      assert.equal(result.code, 1);
    });
  }

  it('svc http with the valid token starts forwarding (control for the cases above)', async () => {
    const agent = await startAgent(server, { token: valid, target: origin.port });
    assert.equal((await agent.close()).code, 0);
  });

  const badHeaders: Array<[string, () => string | undefined]> = [
    ['no Authorization header', () => undefined],
    ['"Bearer" without a token', () => 'Bearer'],
    ['a quoted token', () => `Bearer "${valid}"`],
    ['lower-case bearer with an unknown token', () => `bearer ${unknownToken()}`],
    ['a revoked token', () => `Bearer ${revoked}`],
    ['Basic credentials', () => `Basic ${Buffer.from(`user:${valid}`).toString('base64')}`],
  ];
  it('the API answers the valid token with 200 (control for the cases below)', async () => {
    const result = await api(server, 'GET', '/v1/me', { token: valid });
    assert.equal(result.status, 200);
  });

  for (const [name, header] of badHeaders) {
    it(`the API answers ${name} with 401 and exactly {"error":"unauthorized"}`, async () => {
      const value = header();
      const result = await api(server, 'GET', '/v1/me', value === undefined ? {} : { authorization: value });
      assert.equal(result.status, 401);
      assert.equal(result.text, '{"error":"unauthorized"}');
    });
  }
});
