import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BindMessages } from '@svcrouter/protocol';
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
import { startHoldingOrigin, type HoldingOrigin } from './harness/lifecycle-support.js';

describe('tunnel names', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let other: HoldingOrigin;
  let otherToken: string;

  before(async () => {
    server = await startServer();
    origin = await startOrigin();
    other = await startHoldingOrigin();
    otherToken = await server.createAccount('other@example.com');
  });
  after(async () => {
    await other?.close();
    await origin?.close();
    await server?.close();
  });

  /** Runs `svc http` expecting it to fail; returns its exit code and stderr. */
  async function refused(token: string, subdomain: string): Promise<{ code: number | null; stderr: string; stdout: string }> {
    const proc = spawnAgent(server, { token, target: origin.port, subdomain });
    const { code } = await proc.exited;
    return { code, stderr: proc.stderrLines.join('\n'), stdout: proc.lines.join('\n') };
  }

  it('SVC_SUBDOMAIN=myapp is served at https://myapp.localhost:<https port>', async () => {
    const agent = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'myapp' });
    try {
      assert.equal(agent.url, `https://myapp.localhost:${server.httpsPort}`);
      assert.equal((await visit(server, 'myapp.localhost', '/')).text, 'hello from origin');
    } finally {
      await agent.close();
    }
  });

  it('without SVC_SUBDOMAIN each run gets a fresh random 10-character [a-z0-9] name', async () => {
    const names: string[] = [];
    for (let run = 0; run < 2; run++) {
      const agent = await startAgent(server, { token: server.token, target: origin.port });
      names.push(agent.hostname);
      await agent.close();
    }
    for (const name of names) assert.match(name, /^[a-z0-9]{10}\.localhost$/);
    assert.notEqual(names[0], names[1]);
  });

  it('lower-cases an upper-case SVC_SUBDOMAIN', async () => {
    const agent = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'MixedCase1' });
    try {
      assert.equal(agent.url, `https://mixedcase1.localhost:${server.httpsPort}`);
    } finally {
      await agent.close();
    }
  });

  for (const label of ['-bad', 'a_b', 'a'.repeat(64), 'a.b']) {
    it(`refuses the invalid label ${JSON.stringify(label.length > 20 ? `${label.length} chars` : label)} with a clear message and exit 1`, async () => {
      const result = await refused(server.token!, label);
      assert.equal(result.code, 1);
      assert.equal(result.stdout, '');
      assert.equal(splitFailure(result.stderr).sentence, BindMessages.subdomainInvalid(label));
    });
  }

  for (const label of ['www', 'api', 'admin']) {
    it(`refuses the reserved name ${label} with a clear message and exit 1`, async () => {
      const result = await refused(server.token!, label);
      assert.equal(result.code, 1);
      assert.equal(result.stdout, '');
      assert.equal(splitFailure(result.stderr).sentence, BindMessages.subdomainReserved(label));
    });
  }

  it('the same account re-running a pinned name takes it over at once; the older agent is told and exits 0', async () => {
    const older = await startAgent(server, { token: server.token, target: other.port, subdomain: 'takeback' });
    const newer = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'takeback' });
    try {
      assert.equal(newer.url, older.url);
      // Superseded rather than failed: exit 0, so a supervisor does not restart it into a tug of war.
      const { code } = await older.proc.exited;
      assert.equal(code, 0);
      assert.ok(older.proc.stderrLines.includes(BindMessages.takenOver('takeback.localhost')), older.proc.output);
      assert.equal((await visit(server, 'takeback.localhost', '/')).text, 'hello from origin');
    } finally {
      await newer.close();
    }
  });

  it("refuses another account's held name with an error naming the host, never another name; free once the holder exits", async () => {
    const holder = await startAgent(server, { token: server.token, target: origin.port, subdomain: 'held' });
    const result = await refused(otherToken, 'held');
    assert.notEqual(result.code, 0);
    assert.equal(result.stdout, '');
    assert.equal(splitFailure(result.stderr).sentence, BindMessages.nameTaken('held.localhost'));
    assert.equal((await visit(server, 'held.localhost', '/')).text, 'hello from origin');

    assert.equal((await holder.close()).code, 0);
    const taker = await startAgent(server, { token: otherToken, target: other.port, subdomain: 'held' });
    try {
      assert.equal(taker.url, holder.url);
      assert.equal((await visit(server, 'held.localhost', '/')).text, 'hello from holding origin');
    } finally {
      await taker.close();
    }
  });
});
