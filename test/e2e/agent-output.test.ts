import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { h2Request, h2Session } from './harness/h2-visitor.js';
import { serverSuite, startAgent, startOrigin, visit, withRestartableServer } from './harness/index.js';

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

  it("a visitor's HTTP/2 path bytes 0x80–0x9f (C1 controls: CSI, OSC…) never reach the developer's screen", async () => {
    const { server, origin } = system;
    const agent = await startAgent(server, { token: server.token, target: origin.port, args: ['--log', 'stdout'] });
    const session = h2Session(server, agent.hostname);
    try {
      // 0x9d is OSC, 0x9c its end (ST): the edge refuses the path, as it refuses it over HTTP/1.1.
      // Were one to arrive from elsewhere, the agent prints it as %XX (output.test.ts, screen-render.test.ts).
      const refused = await h2Request(session, { ':method': 'GET', ':path': '/c1\u009d52;c;aGk=\u009c\u009b2J' });
      assert.equal(refused.status, 400);
      assert.equal((await h2Request(session, { ':method': 'GET', ':path': '/after' })).status, 200);
      await agent.proc.waitForLine(/ GET \/after 200 \d+ms$/);
      assert.ok(!agent.proc.output.includes('/c1'), agent.proc.output);
      assert.doesNotMatch(agent.proc.output, /[\u0080-\u009f]/);
      assert.equal((await agent.close()).code, 0);
    } finally {
      session.close();
      await agent.proc.kill('SIGKILL');
    }
  });

  it('--log-format json: a lost edge is one reconnecting event, its return one reconnected event with the same URL', async () => {
    const origin = await startOrigin();
    try {
      await withRestartableServer(async (first, restart) => {
        const agent = await startAgent(first, { token: first.token, target: origin.port, args: ['--log-format', 'json'] });
        try {
          await first.proc.kill('SIGKILL');
          await agent.proc.waitForLine(/"event":"reconnecting"/);
          await restart();
          await agent.proc.waitForLine(/"event":"reconnected"/);
          assert.equal((await agent.close()).code, 0);
        } finally {
          await agent.proc.kill('SIGKILL');
        }
        const events = agent.proc.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
        assert.deepEqual(
          events.map((event) => event.event),
          ['started', 'inspector', 'reconnecting', 'reconnected', 'closed'],
        );
        const local = `http://localhost:${origin.port}`;
        assert.equal(events[2]!.tunnel, agent.url);
        assert.equal(events[2]!.planned, false);
        assert.equal(typeof events[2]!.reason, 'string');
        assert.deepEqual({ ...events[3], time: undefined }, { event: 'reconnected', time: undefined, name: '', url: agent.url, local });
        assert.deepEqual({ ...events[4], time: undefined }, { event: 'closed', time: undefined });
      });
    } finally {
      await origin.close();
    }
  });
});
