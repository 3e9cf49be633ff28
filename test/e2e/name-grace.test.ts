import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  spawnAgent,
  splitFailure,
  startAgent,
  startOrigin,
  startServer,
  visit,
  type TestOrigin,
  type TestServer,
} from './harness/index.js';

// A name whose agent lost its connection (killed, network gone) stays its account's for
// SVC_NAME_GRACE_MS, so no other account can take it while the agent reconnects.

describe('a dropped agent keeps its name for the grace period', () => {
  let origin: TestOrigin;
  const servers: TestServer[] = [];
  before(async () => {
    origin = await startOrigin();
  });
  after(async () => {
    await origin?.close();
    for (const server of servers) await server.close();
  });

  /** Runs `svc http` for `subdomain` expecting a refusal; returns its exit code and stderr. */
  async function refused(server: TestServer, token: string, subdomain: string): Promise<{ code: number | null; stderr: string }> {
    const proc = spawnAgent(server, { token, target: origin.port, subdomain });
    // An agent that got the name keeps running: stop it, so the test fails at once rather than hang.
    const bound = proc.waitForLine(/^Forwarding /).then(
      () => proc.kill('SIGINT'),
      () => undefined,
    );
    const { code } = await proc.exited;
    await bound;
    return { code, stderr: proc.stderrLines.join('\n') };
  }

  /** Kills the agent holding `subdomain` without a goodbye and waits until the edge has noticed. */
  async function dropAgent(
    server: TestServer,
    agent: { proc: { kill(signal: NodeJS.Signals): Promise<unknown> } },
    subdomain: string,
  ): Promise<void> {
    const unbound = server.proc.waitForLine(new RegExp(`${subdomain}\\.localhost.*"clean":false.*tunnel unbound`));
    await agent.proc.kill('SIGKILL');
    await unbound;
  }

  it('refuses another account the name while the owner is away, and gives it back to the owner at once', async () => {
    const server = await startServer();
    servers.push(server);
    const otherToken = await server.createAccount('other@example.com');
    const owner = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'graced' });
    await dropAgent(server, owner, 'graced');

    const taken = await refused(server, otherToken, 'graced');
    assert.notEqual(taken.code, 0);
    assert.equal(
      splitFailure(taken.stderr).sentence,
      'graced.localhost is already in use by another account; choose another SVC_SUBDOMAIN',
    );

    const back = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'graced' });
    assert.equal((await visit(server, 'graced.localhost', '/')).text, 'hello from origin');
    // A clean exit gives the name up at once: no grace.
    assert.equal((await back.close()).code, 0);
    const taker = await startAgent(server, { token: otherToken, target: origin.port, subdomain: 'graced' });
    assert.equal((await taker.close()).code, 0);
  });

  it('frees the name for other accounts once the grace period is over', async () => {
    const server = await startServer({ env: { SVC_NAME_GRACE_MS: '1' } });
    servers.push(server);
    const otherToken = await server.createAccount('other@example.com');
    const owner = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'brief' });
    await dropAgent(server, owner, 'brief');
    const taker = await startAgent(server, { token: otherToken, target: origin.port, subdomain: 'brief' });
    assert.equal((await taker.close()).code, 0);
  });
});
