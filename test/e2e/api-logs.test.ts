import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runAgent, startAgent, startOrigin, startServer, visit, type TestOrigin, type TestServer } from './harness/index.js';
import { call } from './harness/api-helpers.js';

// No token and no Authorization header ever reaches the server's logs, at any level. A whole
// flow runs at trace level; then the server's stdout and stderr are searched. The only token
// allowed anywhere is the first-start token in its welcome banner on stdout (product output).

describe('server logs never carry tokens', () => {
  let server: TestServer;
  let origin: TestOrigin;
  const tokens: string[] = [];

  before(async () => {
    server = await startServer({ env: { SVC_LOG_LEVEL: 'trace' } });
    origin = await startOrigin();
    const first = server.token!;
    tokens.push(first);

    const created = await call(server, 'POST', '/v1/keys', { token: first }, { description: 'logged flow' });
    const key = created.body as { id: string; token: string };
    tokens.push(key.token);
    const other = await server.createAccount('logs-other@example.com');
    tokens.push(other);
    const wrong = `svc_${'Z'.repeat(43)}`;
    tokens.push(wrong);

    for (const token of [first, key.token, other, wrong]) {
      await call(server, 'GET', '/v1/me', { token });
      await call(server, 'GET', '/v1/requests?limit=5', { token });
    }
    await call(server, 'GET', '/v1/me', { authorization: `Basic ${Buffer.from(`u:${first}`).toString('base64')}` });
    await call(server, 'GET', '/v1/tunnels?bogus=1', { token: first });

    const agent = await startAgent(server, { token: key.token, target: origin.port });
    // A visitor's own Authorization header goes to the origin, never to the logs.
    await visit(server, agent.hostname, '/echo', { headers: { authorization: `Bearer ${first}` } });
    await visit(server, agent.hostname, '/status/500');
    assert.equal((await call(server, 'DELETE', `/v1/keys/${key.id}`, { token: first })).status, 204);
    await agent.proc.exited;
    const retry = await runAgent(['http', String(origin.port)], { SVC_TOKEN: key.token, SVC_SERVER: server.url });
    assert.equal(retry.code, 1);
    // Stopping flushes every log line before the process exits.
    await server.close();
  });
  after(async () => {
    await origin?.close();
    await server?.close();
  });

  it('logged below info (the search below is meaningful)', () => {
    const logs = server.proc.stderrLines.join('\n');
    // 20 = debug; at SVC_LOG_LEVEL=trace every trace line (10) would be searched as well.
    assert.match(logs, /"level":20/);
    assert.match(logs, /"msg":"api request"/);
    assert.match(logs, /"msg":"key revoked"/);
    assert.match(logs, /"msg":"agent session opened"/);
  });

  it('stderr (the log) holds no token, no Authorization header and no bearer value', () => {
    const logs = server.proc.stderrLines.join('\n');
    for (const token of tokens) assert.ok(!logs.includes(token), `a token (${token.slice(0, 8)}…) is in the log`);
    assert.doesNotMatch(logs, /authorization/i);
    assert.doesNotMatch(logs, /Bearer svc_/i);
    assert.doesNotMatch(logs, /svc_[A-Za-z0-9_-]{20,}/);
  });

  it('stdout shows only the first token, only in its welcome banner', () => {
    const lines = server.proc.lines;
    const created = lines.findIndex((line) => line.startsWith('Created a local account'));
    assert.ok(created >= 0);
    const withToken = lines.flatMap((line, i) => (line.includes('svc_') ? [i] : []));
    const [first] = tokens;
    assert.deepEqual(withToken, [created + 1, created + 3]);
    assert.equal(lines[created + 1], `  ${first}`);
    assert.ok(lines[created + 3]!.startsWith(`  SVC_TOKEN=${first} `));
    const stdout = lines.join('\n');
    for (const token of tokens.slice(1)) assert.ok(!stdout.includes(token));
    assert.doesNotMatch(stdout, /authorization|Bearer/i);
  });
});
