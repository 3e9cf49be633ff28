import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, it } from 'node:test';
import { Messages } from '@svcrouter/protocol';
import { originSuite, splitFailure, startAgent, visit, withRestartableServer } from './harness/index.js';
import { revokeToken } from './harness/lifecycle-support.js';

const LOST = /^Connection to the edge lost/;
/** A SIGTERM is announced to agents: they say the edge is restarting rather than lost. */
const RESTARTING = /^Edge restarting \(/;
const DOWN = /^(Connection to the edge lost|Edge restarting) \(/;
const BACK = /^Reconnected: forwarding /;

describe('an agent across a server restart', () => {
  const system = originSuite();

  for (const stop of ['SIGTERM', 'SIGKILL'] as const) {
    const down = stop === 'SIGTERM' ? RESTARTING : LOST;
    it(`after a ${stop} and restart, the agent prints one ${stop === 'SIGTERM' ? 'restarting' : 'lost'} line and one back line and serves the same hostname`, async () => {
      await withRestartableServer(async (first, restart) => {
        const agent = await startAgent(first, { token: first.token, target: system.origin.port });
        try {
          await first.proc.kill(stop);
          await agent.proc.waitForLine(down);
          const second = await restart();
          await agent.proc.waitForLine(BACK);
          const count = (pattern: RegExp): number => agent.proc.output.split('\n').filter((line) => pattern.test(line)).length;
          assert.deepEqual([count(DOWN), count(down), count(BACK)], [1, 1, 1], agent.proc.output);
          assert.ok(
            agent.proc.lines.includes(`Reconnected: forwarding ${agent.url} -> http://localhost:${system.origin.port}`),
            agent.proc.output,
          );
          assert.equal((await visit(second, agent.hostname, '/')).text, 'hello from origin');
          assert.equal((await agent.close()).code, 0);
        } finally {
          await agent.proc.kill('SIGKILL');
        }
      });
    });
  }

  it('an episode of several refused dials prints one lost line, then one back line', async () => {
    await withRestartableServer(async (first, restart) => {
      const agent = await startAgent(first, { token: first.token, target: system.origin.port });
      try {
        await first.proc.kill('SIGTERM');
        // A stand-in on the edge's port refuses the first dials (as a proxy would while the
        // edge restarts), so the episode has several attempts that must stay silent.
        const dials = await refuseDials(first.httpPort, 3);
        await dials.refused;
        await dials.close();
        await restart();
        await agent.proc.waitForLine(BACK);
        const count = (pattern: RegExp): number => agent.proc.output.split('\n').filter((line) => pattern.test(line)).length;
        assert.deepEqual([count(DOWN), count(BACK)], [1, 1], agent.proc.output);
        assert.equal((await agent.close()).code, 0);
      } finally {
        await agent.proc.kill('SIGKILL');
      }
    });
  });

  it('Ctrl-C while the agent is reconnecting exits 0 without waiting for the edge', async () => {
    await withRestartableServer(async (first) => {
      const agent = await startAgent(first, { token: first.token, target: system.origin.port });
      await first.proc.kill('SIGKILL');
      await agent.proc.waitForLine(LOST);
      assert.deepEqual(await agent.proc.kill('SIGINT'), { code: 0, signal: null });
    });
  });

  it('a token revoked while the agent is reconnecting ends it with the token message and exit 1', async () => {
    await withRestartableServer(async (first, restart) => {
      const agent = await startAgent(first, { token: first.token, target: system.origin.port });
      await first.proc.kill('SIGTERM');
      await agent.proc.waitForLine(DOWN);
      await revokeToken(first.dataDir, first.token!);
      await restart();
      const { code } = await agent.proc.exited;
      assert.equal(code, 1);
      assert.equal(splitFailure(agent.proc.stderrLines.join('\n')).sentence.split('\n').at(-1), Messages.TOKEN_INVALID);
    });
  });
});

/** Listens on `port` and answers every request 503; `refused` resolves after `count` of them. */
async function refuseDials(port: number, count: number): Promise<{ refused: Promise<void>; close(): Promise<void> }> {
  let seen = 0;
  let done!: () => void;
  const refused = new Promise<void>((resolve) => (done = resolve));
  const server = http.createServer((_req, res) => {
    res.writeHead(503, { connection: 'close' }).end();
    if (++seen === count) done();
  });
  server.on('upgrade', (_req, socket) => {
    socket.end('HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    if (++seen === count) done();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    refused,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
