import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort } from '@svcrouter/testkit';
import { ErrorCode, Messages, SvcError, forward, START_ATTEMPTS, type ErrorCodeValue, type Tunnel } from '@svcrouter/sdk';
import { startOrigin, startServer, visit, type TestOrigin, type TestServer } from './harness/index.js';

// forward() against a real svc-server: each way it refuses rejects with SvcError, its stable
// code and the sentence to show, including the edge's own refusals carried over the wire.

/** The SvcError `promise` rejects with; fails if it resolves or rejects with anything else. */
async function refusal(promise: Promise<Tunnel>): Promise<SvcError> {
  const error = await promise.then(
    async (tunnel) => {
      await tunnel.close();
      return assert.fail('forward() resolved');
    },
    (failure: unknown) => failure,
  );
  assert.ok(error instanceof SvcError, `not a SvcError: ${String(error)}`);
  return error;
}

function assertCode(error: SvcError, code: ErrorCodeValue, message: string | RegExp): void {
  assert.equal(error.code, code, error.message);
  if (typeof message === 'string') assert.equal(error.message, message);
  else assert.match(error.message, message);
}

const QUOTA = 1024 * 1024;

describe('forward() errors against a real server', () => {
  let server: TestServer;
  let origin: TestOrigin;
  const open: Tunnel[] = [];

  before(async () => {
    // Free accounts get one tunnel, pro ones a tiny monthly transfer quota.
    server = await startServer({ env: { SVC_PLANS: JSON.stringify({ free: { tunnels: 1 }, pro: { bandwidthBytes: QUOTA } }) } });
    origin = await startOrigin();
  });
  after(async () => {
    await Promise.all(open.map((tunnel) => tunnel.close()));
    await origin?.close();
    await server?.close();
  });

  const start = (options: { token?: string; subdomain?: string; domain?: string; serverUrl?: string; hostHeader?: string }) =>
    forward({ addr: origin.port, serverUrl: server.url, reconnect: false, ...options });

  it('TOKEN_INVALID for an unknown token and for none at all', async () => {
    assertCode(await refusal(start({ token: `svc_${'A'.repeat(43)}` })), ErrorCode.TOKEN_INVALID, Messages.TOKEN_INVALID);
    const saved = process.env.SVC_TOKEN;
    delete process.env.SVC_TOKEN;
    try {
      assertCode(await refusal(start({})), ErrorCode.TOKEN_INVALID, Messages.TOKEN_INVALID);
    } finally {
      if (saved !== undefined) process.env.SVC_TOKEN = saved;
    }
  });

  it("TUNNEL_LIMIT once the plan's tunnels are in use", async () => {
    const token = await server.createAccount('limit@example.com', 'free');
    open.push(await start({ token }));
    assertCode(await refusal(start({ token })), ErrorCode.TUNNEL_LIMIT, Messages.TUNNEL_LIMIT);
  });

  it("BANDWIDTH_LIMIT once the month's transfer quota is used up", async () => {
    const token = await server.createAccount('quota@example.com', 'pro');
    const first = await start({ token });
    open.push(first);
    // The edge cuts this download once the quota is consumed; how it ends does not matter here.
    await visit(server, first.hostname, `/bytes?n=${4 * QUOTA}`).catch(() => undefined);
    assertCode(await refusal(start({ token })), ErrorCode.BANDWIDTH_LIMIT, Messages.BANDWIDTH_LIMIT);
  });

  it('NAME_TAKEN for a subdomain another account holds', async () => {
    const holder = await server.createAccount('holder@example.com', 'pro');
    const other = await server.createAccount('other@example.com', 'pro');
    open.push(await start({ token: holder, subdomain: 'sdk-taken' }));
    assertCode(
      await refusal(start({ token: other, subdomain: 'sdk-taken' })),
      ErrorCode.NAME_TAKEN,
      /^sdk-taken\.\S+ is already in use by another account/,
    );
  });

  it('DOMAIN_NOT_VERIFIED for a custom domain the account has not verified', async () => {
    const error = await refusal(start({ token: server.token!, domain: 'app.unverified.example.test' }));
    assertCode(error, ErrorCode.DOMAIN_NOT_VERIFIED, /app\.unverified\.example\.test/);
  });

  it('NAME_INVALID for a hostHeader that is neither rewrite nor a host, from the option or SVC_HOST_HEADER', async () => {
    const expected = 'invalid host header "a\\r\\nX-Evil: 1": expected "rewrite" or a host name, optionally with :port';
    assertCode(await refusal(start({ token: server.token!, hostHeader: 'a\r\nX-Evil: 1' })), ErrorCode.NAME_INVALID, expected);
    process.env.SVC_HOST_HEADER = 'a\r\nX-Evil: 1';
    try {
      assertCode(await refusal(start({ token: server.token! })), ErrorCode.NAME_INVALID, expected);
      // A valid SVC_HOST_HEADER is the default the option overrides.
      process.env.SVC_HOST_HEADER = 'rewrite';
      const fromEnv = await start({ token: server.token! });
      try {
        await visit(server, fromEnv.hostname, '/from-env');
        assert.equal(origin.seen.at(-1)!.headers.host, `localhost:${origin.port}`);
      } finally {
        await fromEnv.close();
      }
      const fromOption = await start({ token: server.token!, hostHeader: 'from.option' });
      try {
        await visit(server, fromOption.hostname, '/from-option');
        assert.equal(origin.seen.at(-1)!.headers.host, 'from.option');
      } finally {
        await fromOption.close();
      }
    } finally {
      delete process.env.SVC_HOST_HEADER;
    }
  });

  it('EDGE_UNREACHABLE when nothing listens at the server URL, after the start retries', async () => {
    const serverUrl = `http://127.0.0.1:${await freePort()}`;
    const error = await refusal(start({ token: server.token!, serverUrl }));
    assertCode(
      error,
      ErrorCode.EDGE_UNREACHABLE,
      `cannot reach the svcRouter edge at ${serverUrl} (ECONNREFUSED), after ${START_ATTEMPTS} attempts`,
    );
  });

  it('EDGE_UNREACHABLE when the URL answers HTTP but is not an edge', async () => {
    // The test origin is a plain web server: it answers the session request without upgrading.
    const error = await refusal(start({ token: server.token!, serverUrl: origin.url }));
    assertCode(
      error,
      ErrorCode.EDGE_UNREACHABLE,
      new RegExp(
        `^cannot reach the svcRouter edge at ${origin.url} \\(HTTP \\d{3}, not a svcRouter edge session\\), after ${START_ATTEMPTS} attempts$`,
      ),
    );
  });
});
