import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Messages, SessionLimitMessages } from '@svcrouter/protocol';
import { api, runAgent, splitFailure, startAgent, startOrigin, startServer, type TestOrigin, type TestServer } from './harness/index.js';

// SVC_MAX_SESSIONS and SVC_MAX_ACCOUNT_SESSIONS: a node refuses sessions past its limits with a
// sentence the agent prints, counts the refusals in /metrics, and takes sessions again as
// others end.
describe('session limits', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let otherToken: string;
  let thirdToken: string;

  before(async () => {
    server = await startServer({ env: { SVC_MAX_SESSIONS: '2', SVC_MAX_ACCOUNT_SESSIONS: '1' } });
    origin = await startOrigin();
    otherToken = await server.createAccount('second@example.com');
    thirdToken = await server.createAccount('third@example.com');
  });
  after(async () => {
    await origin?.close();
    await server?.close();
  });

  /** `svc http` that must fail: its sentence and hint. */
  async function refused(token: string): Promise<{ sentence: string; hint: string }> {
    const result = await runAgent(['http', String(origin.port)], { SVC_SERVER: server.url, SVC_TOKEN: token });
    assert.equal(result.code, 1, result.stderr);
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
    return splitFailure(result.stderr);
  }

  /** The value of one series of /metrics. */
  async function metric(series: string): Promise<number> {
    const text = (await api(server, 'GET', '/metrics')).text;
    const escaped = series.replace(/[{}"]/g, (c) => `\\${c}`);
    return Number(new RegExp(`^${escaped} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  }

  it("an account's second session is refused with the account's sentence; the node's limit then refuses everyone", async () => {
    const first = await startAgent(server, { token: server.token, target: origin.port });
    try {
      const own = await refused(server.token!);
      assert.equal(own.sentence, SessionLimitMessages.account(1));
      assert.ok(own.sentence.startsWith(Messages.SESSION_LIMIT));
      assert.match(own.hint, /SVC_MAX_ACCOUNT_SESSIONS/);

      const second = await startAgent(server, { token: otherToken, target: origin.port });
      try {
        const full = await refused(thirdToken);
        assert.equal(full.sentence, SessionLimitMessages.node(2));
        assert.equal(await metric('svc_agent_sessions_refused_total{limit="account"}'), 1);
        assert.equal(await metric('svc_agent_sessions_refused_total{limit="node"}'), 1);
        assert.equal(await metric('svc_agent_sessions_max'), 2);
        assert.equal(await metric('svc_agent_sessions'), 2);
        assert.equal(await metric('svc_agent_sessions_idle'), 2);
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
    }
  });

  it('a session that ended makes room at once', async () => {
    const again = await startAgent(server, { token: thirdToken, target: origin.port });
    try {
      assert.match(again.url, /^https:\/\//);
    } finally {
      await again.close();
    }
    const back = await startAgent(server, { token: thirdToken, target: origin.port });
    await back.close();
  });

  it('/metrics shows what the process costs beside the sessions', async () => {
    assert.ok((await metric('process_resident_memory_bytes')) > 0);
    const text = (await api(server, 'GET', '/metrics')).text;
    assert.match(text, /^process_cpu_seconds_total \d+(\.\d+)?$/m);
  });
});
