import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '@svcrouter/testkit';
import { Messages } from '@svcrouter/sdk';
import {
  runAgent,
  splitFailure,
  startAgent,
  startOrigin,
  startServer,
  tempDir,
  type TestOrigin,
  type TestServer,
} from './harness/index.js';

// Each failure of `svc http` is one sentence plus a hint and a non-zero exit, never a stack trace.
describe('agent failures', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let temp: Awaited<ReturnType<typeof tempDir>>;

  before(async () => {
    server = await startServer({ env: { SVC_PLANS: JSON.stringify({ free: { tunnels: 1 } }) } });
    origin = await startOrigin();
    temp = await tempDir('svc-agent-failures-');
  });
  after(async () => {
    await origin?.close();
    await server?.close();
    await temp?.remove();
  });

  /** Runs `svc http` and checks the shape every failure shares. */
  async function failing(env: Record<string, string>, args = ['http', String(origin.port)]) {
    const result = await runAgent(args, { SVC_SERVER: server.url, SVC_TOKEN: server.token!, ...env });
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stdout, '');
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
    return splitFailure(result.stderr);
  }

  it('a tunnel over the plan limit: the limit sentence and how to free a tunnel', async () => {
    const first = await startAgent(server, { token: server.token, target: origin.port });
    try {
      const failure = await failing({});
      assert.equal(failure.sentence, Messages.TUNNEL_LIMIT);
      assert.match(failure.hint, /GET \/v1\/tunnels/);
    } finally {
      await first.close();
    }
  });

  it('an edge that does not answer: retried, then the address and what to check', async () => {
    const serverUrl = `http://127.0.0.1:${await freePort()}`;
    const failure = await failing({ SVC_SERVER: serverUrl });
    assert.match(failure.sentence, new RegExp(`^cannot reach the svcRouter edge at ${serverUrl} \\(ECONNREFUSED\\), after \\d+ attempts$`));
    assert.match(failure.hint, /SVC_SERVER/);
  });

  it('an SVC_CA_FILE that does not exist: its path and the error code, not a stack trace', async () => {
    const missing = path.join(temp.dir, 'missing.pem');
    const failure = await failing({ SVC_CA_FILE: missing });
    assert.equal(failure.sentence, `cannot use SVC_CA_FILE ${missing}: ENOENT`);
    assert.match(failure.hint, /PEM/);
  });

  it('an SVC_CA_FILE that is a folder or holds no certificate is refused the same way', async () => {
    assert.equal((await failing({ SVC_CA_FILE: temp.dir })).sentence, `cannot use SVC_CA_FILE ${temp.dir}: EISDIR`);
    const junk = path.join(temp.dir, 'junk.pem');
    await writeFile(junk, 'not a certificate\n');
    assert.equal((await failing({ SVC_CA_FILE: junk })).sentence, `cannot use SVC_CA_FILE ${junk}: it holds no PEM certificate`);
  });

  it('a local port where nothing listens is a warning at start; the tunnel still runs', async () => {
    const port = await freePort();
    const agent = await startAgent(server, { token: server.token, target: port });
    try {
      const warning = await agent.proc.waitForLine(/^warning: nothing answers at http:\/\/localhost:\d+ yet \((ECONNREFUSED)\)/);
      assert.equal(warning[1], 'ECONNREFUSED');
      await agent.proc.waitForLine(/^hint: start the local service/);
      assert.equal(agent.proc.child.exitCode, null, 'still running');
    } finally {
      assert.equal((await agent.close()).code, 0);
    }
  });

  it("a route's local port where nothing listens is warned about too, naming the route's service", async () => {
    const routePort = await freePort();
    const agent = await startAgent(server, { token: server.token, target: origin.port, args: ['--route', `/api=${routePort}`] });
    try {
      const warning = await agent.proc.waitForLine(/^warning: nothing answers at (\S+) yet \((ECONNREFUSED)\)/);
      assert.equal(warning[1], `http://localhost:${routePort}`, 'the route, not the main target, which listens');
      await agent.proc.waitForLine(/^hint: start the local service/);
    } finally {
      assert.equal((await agent.close()).code, 0);
    }
  });
});
