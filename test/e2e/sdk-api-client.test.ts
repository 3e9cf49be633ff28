import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { LOCAL_ACCOUNT_EMAIL } from '@svcrouter/server/cli/welcome';
import { freePort } from '@svcrouter/testkit';
import { requireTools } from '@svcrouter/testkit/tools';
import {
  ApiClient,
  ApiError,
  ErrorCode,
  Messages,
  SvcError,
  forward,
  type CapturedRequest,
  type RequestStreamEvent,
  type Tunnel,
} from '@svcrouter/sdk';
import { eventually } from './harness/api-helpers.js';
import { freshHost, startDomainWorld, type DomainWorld } from './harness/domains-support.js';
import { startOrigin, visit, type TestOrigin } from './harness/index.js';

// The SDK's ApiClient over every /v1 route of a real svc-server (with real DNS for domain
// verification), a tunnel opened with forward(), and the API's errors as one ApiError.

/** Asserts that `promise` rejects with ApiError of this status and code; answers the error. */
async function rejectsWith(promise: Promise<unknown>, status: number, code: string): Promise<ApiError> {
  const error = await promise.then(
    () => assert.fail(`expected ApiError ${status} ${code}`),
    (failure: unknown) => failure,
  );
  assert.ok(error instanceof ApiError, `not an ApiError: ${String(error)}`);
  assert.equal(error.status, status, error.message);
  assert.equal(error.code, code, error.message);
  return error;
}

if (requireTools('SDK REST client', ['pebble-challtestsrv'], 'pebble')) {
  describe('SDK ApiClient against a real server', () => {
    let world: DomainWorld;
    let token: string;
    let client: ApiClient;
    let origin: TestOrigin;
    let tunnel: Tunnel;
    let startedAt: string;

    before(async () => {
      startedAt = new Date().toISOString();
      world = await startDomainWorld({ acme: false });
      token = world.server.token!;
      client = new ApiClient({ baseUrl: world.server.url, token });
      origin = await startOrigin();
      tunnel = await forward({ addr: origin.port, token, serverUrl: world.server.url, reconnect: false });
    });
    after(async () => {
      await tunnel?.close();
      await origin?.close();
      await world?.close();
    });

    it("me(), usage() and usageHistory() answer for the token's account", async () => {
      const me = await client.me();
      assert.equal(me.email, LOCAL_ACCOUNT_EMAIL);
      const usage = await client.usage();
      assert.equal(usage.plan, me.plan);
      assert.equal(usage.used.tunnels, 1);
      const today = new Date().toISOString().slice(0, 10);
      const history = await client.usageHistory({ from: today, to: today });
      assert.ok(
        history.days.every((day) => day.date === today),
        JSON.stringify(history),
      );
      const invalid = await rejectsWith(client.usageHistory({ from: 'yesterday' }), 400, 'invalid_request');
      assert.match(invalid.message, /from/);
    });

    it('setPassword() sets the dashboard password, then needs the current one; openapi() is the document', async () => {
      await rejectsWith(client.setPassword({ newPassword: 'short' }), 400, 'invalid_request');
      await client.setPassword({ newPassword: 'first dashboard password' });
      await rejectsWith(client.setPassword({ newPassword: 'second dashboard password' }), 403, 'invalid_credentials');
      await rejectsWith(
        client.setPassword({ currentPassword: 'not the password', newPassword: 'second dashboard password' }),
        403,
        'invalid_credentials',
      );
      await client.setPassword({ currentPassword: 'first dashboard password', newPassword: 'second dashboard password' });

      const document = await client.openapi();
      assert.match(String(document.openapi), /^3\.1/);
      const paths = Object.keys(document.paths as Record<string, unknown>);
      assert.ok(paths.includes('/v1/me/password') && paths.includes('/v1/requests/stream'), paths.join(' '));
    });

    it('tunnels.list() shows the forwarded tunnel', async () => {
      const tunnels = await client.tunnels.list();
      const listed = tunnels.find((t) => t.id === tunnel.id);
      assert.ok(listed, JSON.stringify(tunnels));
      assert.equal(listed.status, 'online');
      assert.equal(listed.url, tunnel.url);
      assert.equal(listed.host, tunnel.hostname);
    });

    it('requests.list() filters and pages, and requests.all() walks every page in order', async () => {
      for (let i = 0; i < 5; i++) await visit(world.server, tunnel.hostname, `/status/${i === 2 ? 404 : 200}`);
      // Inspector records are written in batches: the one place a bounded re-read is needed.
      const everything = await eventually(
        () => client.requests.list({ tunnel: tunnel.id, limit: 100 }),
        (page) => page.requests.length >= 5,
        'five requests captured',
      );
      assert.equal(everything.nextCursor, null);
      const first = await client.requests.list({ tunnel: tunnel.id, limit: 2 });
      assert.equal(first.requests.length, 2);
      assert.ok(first.nextCursor, 'a first page of two out of five has a cursor');
      const walked: CapturedRequest[] = [];
      for await (const record of client.requests.all({ tunnel: tunnel.id, limit: 2 })) walked.push(record);
      assert.deepEqual(
        walked.map((r) => r.id),
        everything.requests.map((r) => r.id),
      );
      const notFound = await client.requests.list({ tunnel: tunnel.id, status: 404 });
      assert.deepEqual(
        notFound.requests.map((r) => [r.status, r.path]),
        [[404, '/status/404']],
      );
      const clientErrors = await client.requests.list({ tunnel: tunnel.id, status: '4xx' });
      assert.deepEqual(
        clientErrors.requests.map((r) => r.id),
        notFound.requests.map((r) => r.id),
      );
      const byEveryFilter = await client.requests.list({
        host: tunnel.hostname,
        method: 'get',
        since: startedAt,
        until: new Date(Date.now() + 60_000).toISOString(),
        limit: 100,
      });
      assert.deepEqual(
        byEveryFilter.requests.map((r) => r.id),
        everything.requests.map((r) => r.id),
      );
      assert.deepEqual((await client.requests.list({ host: tunnel.hostname, method: 'POST' })).requests, []);
      assert.deepEqual((await client.requests.list({ host: 'elsewhere.localhost' })).requests, []);
      assert.deepEqual((await client.requests.list({ tunnel: tunnel.id, until: startedAt })).requests, []);
      await rejectsWith(client.requests.list({ limit: 0 }), 400, 'invalid_request');
    });

    it('requests.stream() replays stored records from `since`, follows live ones, and ends on abort', async () => {
      const stored = (await client.requests.list({ tunnel: tunnel.id, limit: 100 })).requests;
      assert.ok(stored.length >= 5, 'the paging test stored records first');
      const abort = new AbortController();
      const events: RequestStreamEvent[] = [];
      for await (const event of client.requests.stream({ tunnel: tunnel.id, since: startedAt }, { signal: abort.signal })) {
        events.push(event);
        // Once the stored records are replayed, one live request; its record ends the loop.
        if (events.length === stored.length) await visit(world.server, tunnel.hostname, '/status/201');
        if (events.length === stored.length + 1) abort.abort();
      }
      const records = events.flatMap((event) => (event.type === 'request' ? [event] : []));
      assert.equal(records.length, events.length, 'no dropped events');
      assert.deepEqual(
        records.slice(0, stored.length).map((event) => event.request),
        [...stored].reverse(),
      );
      assert.ok(records.every((event) => event.id === event.request.id));
      const live = records.at(-1)!.request;
      assert.deepEqual([live.path, live.status, live.tunnelId], ['/status/201', 201, tunnel.id]);
    });

    it('domains: create, list, get, verify (before and after the TXT record), delete', async () => {
      const host = freshHost();
      const created = await client.domains.create(host);
      assert.equal(created.host, host);
      assert.equal(created.state, 'pending');
      assert.deepEqual(
        (await client.domains.list()).map((d) => d.id),
        [created.id],
      );
      assert.deepEqual(await client.domains.get(created.id), created);
      const conflict = await rejectsWith(client.domains.create(host), 409, 'domain_exists');
      assert.ok(conflict.message.length > 0);

      const unpublished = await client.domains.verify(created.id);
      assert.equal(unpublished.state, 'pending');
      assert.equal(unpublished.verification.ok, false);
      assert.equal(unpublished.verification.code, 'txt_not_found');
      await world.dns.addTxt(created.txtRecord.name, created.txtRecord.value);
      const verified = await client.domains.verify(created.id);
      assert.equal(verified.state, 'verified');
      assert.deepEqual(verified.verification, { ok: true, code: null, message: verified.verification.message });

      await client.domains.delete(created.id);
      await rejectsWith(client.domains.get(created.id), 404, 'not_found');
      await rejectsWith(client.domains.delete(created.id), 404, 'not_found');
    });

    it('keys: create one, use it, list it without its secret, delete it and see it refused', async () => {
      const created = await client.keys.create({ description: 'sdk e2e' });
      assert.match(created.token, /^svc_[A-Za-z0-9_-]{43}$/);
      const other = new ApiClient({ baseUrl: world.server.url, token: created.token });
      assert.equal((await other.me()).id, (await client.me()).id);
      const listed = await client.keys.list();
      const key = listed.find((k) => k.id === created.id);
      assert.ok(key);
      assert.equal(key.description, 'sdk e2e');
      assert.ok(!JSON.stringify(listed).includes(created.token), 'the list never carries a secret');
      await client.keys.delete(created.id);
      const refused = await rejectsWith(other.me(), 401, 'unauthorized');
      assert.equal(refused.message, Messages.TOKEN_INVALID);
    });

    it('an unknown token is ApiError 401 and an unknown id is ApiError 404 on every resource', async () => {
      const stranger = new ApiClient({ baseUrl: world.server.url, token: `svc_${'A'.repeat(43)}` });
      await rejectsWith(stranger.me(), 401, 'unauthorized');
      await rejectsWith(stranger.tunnels.list(), 401, 'unauthorized');
      await rejectsWith(client.tunnels.delete('tun_missing'), 404, 'not_found');
      await rejectsWith(client.keys.delete('key_missing'), 404, 'not_found');
      await rejectsWith(client.domains.verify('dom_missing'), 404, 'not_found');
    });

    it('an unreachable server is ApiError 0 unreachable, naming the socket error', async () => {
      const closed = new ApiClient({ baseUrl: `http://127.0.0.1:${await freePort()}`, token });
      const error = await rejectsWith(closed.me(), 0, 'unreachable');
      assert.match(error.message, /ECONNREFUSED/);
    });

    it('token and base URL default to SVC_TOKEN and SVC_SERVER, read when the client is made', async () => {
      const saved = { token: process.env.SVC_TOKEN, server: process.env.SVC_SERVER };
      try {
        delete process.env.SVC_TOKEN;
        assert.throws(() => new ApiClient(), /SVC_TOKEN/);
        process.env.SVC_TOKEN = token;
        process.env.SVC_SERVER = `${world.server.url}/`;
        const fromEnv = new ApiClient();
        assert.equal(fromEnv.baseUrl, world.server.url);
        assert.equal((await fromEnv.me()).email, LOCAL_ACCOUNT_EMAIL);
      } finally {
        for (const [name, value] of [
          ['SVC_TOKEN', saved.token],
          ['SVC_SERVER', saved.server],
        ] as const) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      }
    });

    it("tunnels.delete() releases the tunnel: forward()'s tunnel ends with TUNNEL_RELEASED", async () => {
      const ended = once(tunnel, 'end');
      await client.tunnels.delete(tunnel.id);
      const [error] = (await ended) as [unknown];
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, ErrorCode.TUNNEL_RELEASED);
      assert.ok(!(await client.tunnels.list()).some((t) => t.id === tunnel.id && t.status === 'online'));
    });
  });
}
