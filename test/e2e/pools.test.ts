import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { BindMessages, Messages } from '@svcrouter/protocol';
import { forwardMany } from '@svcrouter/sdk';
import { api, spawnAgent, startAgent, startServer, visit, type TestAgent, type TestServer } from './harness/index.js';
import { closedPort, sequentialGets, startMemberService, tally, type MemberService } from './harness/pool-support.js';

const POOL = ['--pool'];

describe('pools: several agents of one account on one name', () => {
  let server: TestServer;
  const services: MemberService[] = [];
  const agents: TestAgent[] = [];

  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await Promise.all(agents.map((agent) => agent.close()));
    await Promise.all(services.map((service) => service.close()));
    await server?.close();
  });

  async function member(name: string, subdomain: string, port?: number): Promise<{ service: MemberService; agent: TestAgent }> {
    const service = await startMemberService(name);
    services.push(service);
    const agent = await startAgent(server, { token: server.token, target: port ?? service.port, subdomain, args: POOL });
    agents.push(agent);
    return { service, agent };
  }

  it('spreads sequential requests over both members of a pool of two', async () => {
    const a = await member('a', 'spread');
    const b = await member('b', 'spread');
    assert.equal(a.agent.url, b.agent.url);
    const counts = tally(await sequentialGets(server, 'spread.localhost', 20));
    // Nothing in flight between sequential requests: the members take turns.
    assert.deepEqual(counts, { 'member a': 10, 'member b': 10 });
  });

  it('lists each member as a tunnel with the same url and pool: true; one member stops alone', async () => {
    const listed = await api(server, 'GET', '/v1/tunnels', { token: server.token });
    const tunnels = (listed.body as { tunnels: Array<{ id: string; url: string; pool: boolean; status: string; host: string }> }).tunnels;
    const members = tunnels.filter((tunnel) => tunnel.host === 'spread.localhost' && tunnel.status === 'online');
    assert.equal(members.length, 2);
    assert.ok(members.every((tunnel) => tunnel.pool && tunnel.url === members[0]!.url));
    const deleted = await api(server, 'DELETE', `/v1/tunnels/${members[0]!.id}`, { token: server.token });
    assert.equal(deleted.status, 204);
    const bodies = await sequentialGets(server, 'spread.localhost', 6);
    assert.equal(Object.keys(tally(bodies)).length, 1, 'the member left stops taking requests at once');
    const after = (await api(server, 'GET', '/v1/tunnels', { token: server.token })).body as {
      tunnels: Array<{ host: string; status: string }>;
    };
    assert.equal(after.tunnels.filter((tunnel) => tunnel.host === 'spread.localhost' && tunnel.status === 'online').length, 1);
  });

  it('a member killed (SIGKILL) mid-load: its GET in flight and every GET after go to the others, no visitor error', async () => {
    const [a, b, c] = [await member('a', 'kill'), await member('b', 'kill'), await member('c', 'kill')];
    // A load of sequential GETs runs while a member dies.
    const load = sequentialGets(server, 'kill.localhost', 60);
    // One member's service holds a request; its agent is killed while the request is in flight.
    const held = visit(server, 'kill.localhost', '/held');
    const victim = await Promise.race(
      [a, b, c].map(async (m) => {
        await once(m.service.events, 'held');
        return m;
      }),
    );
    for (const m of [a, b, c]) if (m !== victim) m.service.release();
    const before = victim.service.seen;
    await victim.agent.proc.kill('SIGKILL');
    const answer = await held;
    assert.equal(answer.status, 200);
    assert.notEqual(answer.text, `member ${victim.service.name}`);
    const bodies = await load;
    assert.equal(bodies.length, 60);
    const after = await sequentialGets(server, 'kill.localhost', 10);
    assert.ok(!after.includes(`member ${victim.service.name}`));
    assert.equal(victim.service.seen, before, 'nothing reaches the dead member');
  });

  it('a member whose local service refuses the connection is skipped: the request is retried on another', async () => {
    await member('up', 'refused');
    await member('down', 'refused', await closedPort());
    const bodies = await sequentialGets(server, 'refused.localhost', 10);
    assert.deepEqual(tally(bodies), { 'member up': 10 });
    // A POST without a body is retried as well: nothing of it reached the refusing service.
    for (let i = 0; i < 4; i++) {
      const answer = await visit(server, 'refused.localhost', '/', { method: 'POST' });
      assert.equal(answer.status, 200);
    }
  });

  it('a bind with --pool onto a name held without it is refused, and the reverse', async () => {
    const service = await startMemberService('solo');
    services.push(service);
    agents.push(await startAgent(server, { token: server.token, target: service.port, subdomain: 'solo' }));
    const joiner = spawnAgent(server, { token: server.token, target: service.port, subdomain: 'solo', args: POOL });
    const joined = await joiner.exited;
    assert.notEqual(joined.code, 0);
    assert.match(joiner.stderrLines.join('\n'), new RegExp(escape(BindMessages.poolMismatch('solo.localhost', false))));

    await member('p', 'pooled');
    const taker = spawnAgent(server, { token: server.token, target: service.port, subdomain: 'pooled' });
    const took = await taker.exited;
    assert.notEqual(took.code, 0);
    assert.match(taker.stderrLines.join('\n'), new RegExp(escape(BindMessages.poolMismatch('pooled.localhost', true))));
    // The pool and the tunnel of its own both still serve.
    assert.equal((await visit(server, 'pooled.localhost', '/')).text, 'member p');
    assert.equal((await visit(server, 'solo.localhost', '/')).text, 'member solo');
  });

  it("a pool's members share one lock: a member with other rules is refused, the same users meet the first member's passwords", async () => {
    const first = await startMemberService('locked-a');
    const second = await startMemberService('locked-b');
    services.push(first, second);
    const rules = ['--pool', '--basic-auth', 'alice:first-password'];
    agents.push(await startAgent(server, { token: server.token, target: first.port, subdomain: 'locked', args: rules }));
    // Only a header rule: half of the visitors would pass without a password.
    const open = spawnAgent(server, {
      token: server.token,
      target: second.port,
      subdomain: 'locked',
      args: ['--pool', '--response-header-add', 'X-A: b'],
    });
    assert.notEqual((await open.exited).code, 0);
    assert.match(open.stderrLines.join('\n'), new RegExp(escape(BindMessages.poolPolicyMismatch('locked.localhost'))));
    const otherUser = spawnAgent(server, {
      token: server.token,
      target: second.port,
      subdomain: 'locked',
      args: ['--pool', '--basic-auth', 'bob:other-password'],
    });
    assert.notEqual((await otherUser.exited).code, 0);
    // The same user with another password joins, and its visitors need the pool's password.
    agents.push(
      await startAgent(server, {
        token: server.token,
        target: second.port,
        subdomain: 'locked',
        args: ['--pool', '--basic-auth', 'alice:second-password'],
      }),
    );
    const basic = (password: string) => ({ authorization: `Basic ${Buffer.from(`alice:${password}`).toString('base64')}` });
    const served = new Set<string>();
    for (let i = 0; i < 6; i++) {
      assert.equal((await visit(server, 'locked.localhost', '/')).status, 401);
      assert.equal((await visit(server, 'locked.localhost', '/', { headers: basic('second-password') })).status, 401);
      const answer = await visit(server, 'locked.localhost', '/', { headers: basic('first-password') });
      assert.equal(answer.status, 200);
      served.add(answer.text);
    }
    assert.deepEqual([...served].sort(), ['member locked-a', 'member locked-b']);
  });

  it('two tunnels of one agent asking for one name: the second bind is refused, not a silent replacement', async () => {
    const service = await startMemberService('twice');
    services.push(service);
    const twice = forwardMany({ token: server.token!, serverUrl: server.url }, [
      { addr: service.port, subdomain: 'twice' },
      { addr: service.port, subdomain: 'twice' },
    ]);
    await assert.rejects(twice, new RegExp(escape(BindMessages.sameAgent('twice.localhost'))));
  });

  it('a pool without a name of its own is refused: a random name is never shared', async () => {
    const service = await startMemberService('nameless');
    services.push(service);
    const nameless = spawnAgent(server, { token: server.token, target: service.port, args: POOL });
    assert.notEqual((await nameless.exited).code, 0);
    assert.match(nameless.stderrLines.join('\n'), /a pool needs a name every member asks for: --subdomain or --domain/);
  });

  it('a tunnel with access rules is not taken over by a bind that brings only traffic rules', async () => {
    const service = await startMemberService('guarded');
    services.push(service);
    agents.push(
      await startAgent(server, {
        token: server.token,
        target: service.port,
        subdomain: 'guarded',
        args: ['--basic-auth', 'alice:first-password'],
      }),
    );
    const taker = spawnAgent(server, {
      token: server.token,
      target: service.port,
      subdomain: 'guarded',
      args: ['--response-header-add', 'X-A: b'],
    });
    assert.notEqual((await taker.exited).code, 0);
    assert.match(taker.stderrLines.join('\n'), new RegExp(escape(BindMessages.policyRequired('guarded.localhost'))));
    assert.equal((await visit(server, 'guarded.localhost', '/')).status, 401);
  });
});

describe('pools and the plan', () => {
  let server: TestServer;
  let service: MemberService;
  const agents: TestAgent[] = [];

  before(async () => {
    server = await startServer({ env: { SVC_PLANS: JSON.stringify({ free: { tunnels: 2 } }) } });
    service = await startMemberService('m');
  });
  after(async () => {
    await Promise.all(agents.map((agent) => agent.close()));
    await service?.close();
    await server?.close();
  });

  it('counts each member against the tunnel limit', async () => {
    const token = await server.createAccount('pool-limit@example.com', 'free');
    for (let i = 0; i < 2; i++) agents.push(await startAgent(server, { token, target: service.port, subdomain: 'limited', args: POOL }));
    const third = spawnAgent(server, { token, target: service.port, subdomain: 'limited', args: POOL });
    await third.exited;
    assert.match(third.stderrLines.join('\n'), new RegExp(escape(Messages.TUNNEL_LIMIT)));
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
