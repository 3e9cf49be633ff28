import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serverSuite, startAgent, visit } from './harness/index.js';

// Off a terminal the agent prints plain lines, or JSON lines with --log-format json.
describe('agent output modes', () => {
  const system = serverSuite();

  it('--log-format json: one JSON object per event on stdout; the Forwarding line on stderr', async () => {
    const { server, origin } = system;
    const agent = await startAgent(server, { token: server.token, target: origin.port, args: ['--log-format', 'json'] });
    assert.ok(agent.proc.stderrLines.some((line) => line === `Forwarding ${agent.url} -> http://localhost:${origin.port}`));
    await visit(server, agent.hostname, '/status/404');
    await agent.proc.waitForLine(/"event":"request"/);
    assert.equal((await agent.close()).code, 0);
    const events = agent.proc.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(
      events.map((event) => event.event),
      ['started', 'inspector', 'request', 'closed'],
    );
    assert.deepEqual(
      { ...events[0], time: undefined },
      { event: 'started', time: undefined, name: '', url: agent.url, local: `http://localhost:${origin.port}` },
    );
    assert.match(String(events[1]!.url), /^http:\/\/127\.0\.0\.1:\d+$/);
    const request = events[2]!;
    assert.equal(request.path, '/status/404');
    assert.equal(request.status, 404);
    assert.equal(request.tunnel, agent.url);
    assert.equal(typeof request.durationMs, 'number');
    assert.ok(!Number.isNaN(Date.parse(String(request.time))));
  });

  it('--log stdout (and any pipe): the Forwarding line, then one plain line per request', async () => {
    const { server, origin } = system;
    const agent = await startAgent(server, { token: server.token, target: origin.port, args: ['--log', 'stdout'] });
    await visit(server, agent.hostname, '/plain');
    await agent.proc.waitForLine(/^\d\d:\d\d:\d\d\.\d{3} GET \/plain 200 \d+ms$/);
    assert.equal(agent.proc.lines[0], `Forwarding ${agent.url} -> http://localhost:${origin.port}`);
    assert.equal((await agent.close()).code, 0);
  });
});
