import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import {
  AGENT_BIN,
  api,
  runAgent,
  spawnNode,
  startAgent,
  startOrigin,
  startServer,
  tempDir,
  type Proc,
  type TestAgent,
  type TestOrigin,
  type TestServer,
} from './harness/index.js';
import { eventually } from './harness/api-helpers.js';
import { visitFrom, visitH2 } from './harness/access-support.js';
import { send, type Echo } from './harness/policy-support.js';

const run = promisify(execFile);

// Traffic rules with a real server, real agents and real clients (Node's HTTP/1.1 and HTTP/2, curl):
// header rules both ways on each edge path, the rate limit, the edge's own answers, and the same
// policy given as flags and as a config file's `policy:` block.
describe('traffic rules of a tunnel', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let flags: TestAgent;
  let limited: TestAgent;
  let configured: Proc;
  let configuredHost: string;
  let temp: Awaited<ReturnType<typeof tempDir>>;

  const HEADER_FLAGS = [
    '--request-header-add',
    'X-Env: dev',
    '--request-header-remove',
    'Cookie',
    '--response-header-add',
    'X-Frame-Options: DENY',
    '--response-header-remove',
    'X-Origin',
  ];

  before(async () => {
    server = await startServer();
    origin = await startOrigin();
    temp = await tempDir('svc-policy-');
    flags = await startAgent(server, { token: server.token, target: origin.port, args: HEADER_FLAGS });
    limited = await startAgent(server, { token: server.token, target: origin.port, args: ['--rate-limit', '3/1m'] });
    const file = path.join(temp.dir, 'svc.yml');
    await writeFile(
      file,
      [
        `token: ${server.token}`,
        `server: ${server.url}`,
        'tunnels:',
        '  site:',
        `    addr: ${origin.port}`,
        '    policy:',
        '      requestHeaderAdd: ["X-Env: dev"]',
        '      requestHeaderRemove: [Cookie]',
        '      responseHeaderAdd: ["X-Frame-Options: DENY"]',
        '      responseHeaderRemove: [X-Origin]',
        '      rules:',
        '        - match: { path: /admin }',
        '          respond: { status: 403, body: denied }',
        '        - match: { pathRegex: "^/h/(\\\\w?\\\\w?){13}$" }',
        '          respond: { status: 200, body: thirteen }',
        '        - match: { path: /old }',
        '          redirect: { to: /new, status: 301 }',
        '        - match: { pathRegex: "^/docs/(\\\\w+)$" }',
        '          redirect: { to: "https://docs.example.com/$1" }',
        '        - match: { path: /teapot, method: [GET] }',
        '          respond: { status: 418, headers: { X-Tea: earl-grey }, body: "short and stout" }',
        '        - match: { header: { name: X-Maintenance } }',
        '          respond: { status: 503, body: maintenance }',
        '        - match: { pathRegex: "^/api/" }',
        '          rewrite: { from: "^/api/(.*)$", to: "/echo?path=$1" }',
      ].join('\n'),
    );
    configured = spawnNode(AGENT_BIN, ['start', '--config', file], {}, 'agent');
    configuredHost = (await configured.waitForLine(/^Forwarding https:\/\/(\S+?)(?::\d+)? -> /))[1]!;
  });
  after(async () => {
    await configured?.kill('SIGINT');
    await limited?.close();
    await flags?.close();
    await origin?.close();
    await server?.close();
    await temp?.remove();
  });

  /** Asserts the header rules' effect on one echo answer. */
  function assertShaped(answer: { status: number; headers: Record<string, unknown>; text: string }, where: string): void {
    assert.equal(answer.status, 200, where);
    const echo = JSON.parse(answer.text) as Echo;
    assert.equal(echo.headers['x-env'], 'dev', `${where}: the visitor's X-Env is replaced`);
    assert.equal(echo.headers.cookie, undefined, `${where}: Cookie removed`);
    assert.equal(echo.headers['x-forwarded-for'], '127.0.0.1', `${where}: the edge's forwarding headers stay`);
    assert.equal(answer.headers['x-origin'], undefined, `${where}: X-Origin removed from the response`);
    assert.equal(answer.headers['x-frame-options'], 'DENY', `${where}: X-Frame-Options added`);
  }

  it('adds and removes headers both ways on the lean HTTP/1.1 path, Node’s HTTP/1.1 path and HTTP/2', async () => {
    for (const host of [flags.hostname, configuredHost]) {
      const visitor = { 'x-env': 'prod', cookie: 'session=1' };
      assertShaped(await visitFrom(server, host, '/echo', { headers: visitor }), `lean GET ${host}`);
      assertShaped(await send(server, host, 'POST', '/echo', 'a body', visitor), `POST ${host}`);
      assertShaped(await visitH2(server, host, '/echo', visitor), `HTTP/2 ${host}`);
    }
  });

  it('applies the same rules to curl', async () => {
    const { stdout } = await run('curl', [
      '-sS',
      '-i',
      '--resolve',
      `${flags.hostname}:${server.httpPort}:127.0.0.1`,
      '-H',
      'X-Env: prod',
      '-H',
      'Cookie: a=b',
      `http://${flags.hostname}:${server.httpPort}/echo`,
    ]);
    assert.match(stdout, /^x-frame-options: DENY\r$/im);
    assert.doesNotMatch(stdout, /^x-origin:/im);
    assert.match(stdout, /"x-env":"dev"/);
    assert.doesNotMatch(stdout, /"cookie"/);
  });

  it('refuses a header rule on a forwarding header, with the reason, before connecting', async () => {
    for (const args of [
      ['--request-header-add', 'X-Forwarded-For: 6.6.6.6'],
      ['--request-header-remove', 'X-Svc-Identity'],
      ['--response-header-remove', 'X-Real-IP'],
    ]) {
      const result = await runAgent(['http', String(origin.port), ...args], { SVC_SERVER: server.url, SVC_TOKEN: server.token });
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /forwarding header the edge sets: it cannot be added or removed/, result.stderr);
    }
  });

  it('answers 429 with Retry-After past the rate limit, and the local service never sees those requests', async () => {
    const probe = '/echo?limit-probe';
    const seenBefore = origin.seen.filter((r) => r.url === probe).length;
    for (let i = 0; i < 3; i++) assert.equal((await visitFrom(server, limited.hostname, probe)).status, 200);
    const refused = await visitFrom(server, limited.hostname, probe);
    assert.equal(refused.status, 429);
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 120, String(refused.headers['retry-after']));
    assert.equal((await send(server, limited.hostname, 'POST', probe, 'x')).status, 429);
    assert.equal((await visitH2(server, limited.hostname, probe)).status, 429);
    assert.equal(origin.seen.filter((r) => r.url === probe).length, seenBefore + 3);
    // Another visitor address has its own budget.
    assert.equal((await visitFrom(server, limited.hostname, probe, { from: '127.0.0.2' })).status, 200);
  });

  it('answers redirects and responses from the edge and rewrites paths, on HTTP/1.1 and HTTP/2', async () => {
    const before = origin.seen.length;
    const moved = await visitFrom(server, configuredHost, '/old');
    assert.equal(moved.status, 301);
    assert.equal(moved.headers.location, '/new');
    // A prefix is a whole path segment: /older is the local service's.
    assert.equal((await visitFrom(server, configuredHost, '/older')).status, 200);
    const docs = await visitH2(server, configuredHost, '/docs/install');
    assert.equal(docs.status, 302);
    assert.equal(docs.headers.location, 'https://docs.example.com/install');
    const tea = await visitFrom(server, configuredHost, '/teapot');
    assert.equal(tea.status, 418);
    assert.equal(tea.headers['x-tea'], 'earl-grey');
    assert.equal(tea.text, 'short and stout');
    const down = await send(server, configuredHost, 'POST', '/anything', 'body', { 'x-maintenance': '1' });
    assert.equal(down.status, 503);
    assert.equal(down.text, 'maintenance');
    const answered = origin.seen.length;
    assert.equal(answered - before, 1, 'only /older reached the local service');
    const rewritten = JSON.parse((await visitH2(server, configuredHost, '/api/users?page=2')).text) as Echo;
    assert.equal(rewritten.url, '/echo?path=users&page=2');
  });

  it('matches rules against the normalised path and forwards the path the visitor sent', async () => {
    const before = origin.seen.length;
    for (const spelling of [
      '/admin/secret.txt',
      '/%61dmin/secret.txt',
      '//admin/secret.txt',
      '/./admin/secret.txt',
      '/x/../admin/secret.txt',
    ]) {
      assert.equal((await visitFrom(server, configuredHost, spelling)).status, 403, `lean ${spelling}`);
      assert.equal((await send(server, configuredHost, 'POST', spelling, 'x')).status, 403, `Node ${spelling}`);
      assert.equal((await visitH2(server, configuredHost, spelling)).status, 403, `HTTP/2 ${spelling}`);
    }
    assert.equal(origin.seen.length, before, 'no spelling of /admin reached the local service');
    const echo = JSON.parse((await visitFrom(server, configuredHost, '/x/.././echo?q=1')).text) as Echo;
    assert.equal(echo.url, '/x/.././echo?q=1');
  });

  it('runs a pattern that backtracks exponentially in V8 in linear time', async () => {
    // In a backtracking engine this path would hold the edge's event loop for minutes.
    const hostile = await visitFrom(server, configuredHost, `/h/${'a'.repeat(28)}!`);
    assert.equal(hostile.status, 200);
    assert.notEqual(hostile.text, 'thirteen');
    const thirteen = await visitFrom(server, configuredHost, `/h/${'a'.repeat(26)}`);
    assert.equal(thirteen.text, 'thirteen');
  });

  it('records every request a rule answered in the Traffic Inspector with its status', async () => {
    const page = await eventually(
      () => api(server, 'GET', '/v1/requests?limit=1000', { token: server.token }),
      (r) => {
        const records = (r.body as { requests: Array<{ status: number; host: string }> }).requests;
        const statuses = new Set(records.map((x) => `${x.host} ${x.status}`));
        return [
          `${configuredHost} 301`,
          `${configuredHost} 302`,
          `${configuredHost} 418`,
          `${configuredHost} 503`,
          `${limited.hostname} 429`,
        ].every((key) => statuses.has(key));
      },
      'answers captured',
    );
    const records = (page.body as { requests: Array<{ status: number; path: string; host: string }> }).requests;
    assert.ok(records.some((x) => x.host === configuredHost && x.status === 418 && x.path === '/teapot'));
  });

  it('shows the traffic rules in GET /v1/tunnels without secrets', async () => {
    const secret = 'gh-webhook-secret-1234';
    const hooked = await startAgent(server, {
      token: server.token,
      target: origin.port,
      args: ['--verify-webhook', `github:${secret}`, '--request-header-add', 'X-Api-Key: key-value-5678'],
    });
    try {
      const answer = await api(server, 'GET', '/v1/tunnels', { token: server.token });
      const text = JSON.stringify(answer.body);
      assert.ok(!text.includes(secret) && !text.includes('key-value-5678'), 'no secret and no header value in the API');
      const tunnels = (answer.body as { tunnels: Array<{ host: string; traffic: Record<string, unknown> }> }).tunnels;
      const hookedView = tunnels.find((t) => t.host === hooked.hostname)!;
      assert.deepEqual(hookedView.traffic.verifyWebhook, { provider: 'github', maxBody: 1024 * 1024 });
      assert.deepEqual(hookedView.traffic.requestHeaderAdd, ['X-Api-Key']);
      const limitedView = tunnels.find((t) => t.host === limited.hostname)!;
      assert.deepEqual(limitedView.traffic.rateLimit, { count: 3, windowMs: 60_000 });
      const configuredView = tunnels.find((t) => t.host === configuredHost)!;
      assert.deepEqual((configuredView.traffic.rules as string[])[2], '/old* → redirect 301 /new');
      const logs = [...server.proc.lines, ...server.proc.stderrLines, ...hooked.proc.lines, ...hooked.proc.stderrLines].join('\n');
      assert.ok(!logs.includes(secret), 'the secret is never logged');
    } finally {
      await hooked.close();
    }
  });
});

describe('the agent API and traffic rules', () => {
  it('POST /api/tunnels honours a policy block, and refuses a bad one with its key', async () => {
    const server = await startServer();
    const origin = await startOrigin();
    const agent = await startAgent(server, { token: server.token, target: origin.port, args: ['--inspect-addr', '127.0.0.1:0'] });
    try {
      const inspector = (await agent.proc.waitForLine(/^Inspector (http:\/\/127\.0\.0\.1:\d+)$/))[1]!;
      const post = async (body: unknown) => {
        const response = await fetch(`${inspector}/api/tunnels`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return { status: response.status, json: (await response.json()) as { url?: string; message?: string } };
      };
      const added = await post({
        name: 'shaped',
        addr: origin.port,
        policy: { responseHeaderAdd: ['X-Added: by-api'], rules: [{ match: { path: '/gone' }, respond: { status: 410 } }] },
      });
      assert.equal(added.status, 201, JSON.stringify(added.json));
      const host = new URL(added.json.url!).hostname;
      assert.equal((await visitFrom(server, host, '/echo')).headers['x-added'], 'by-api');
      assert.equal((await visitFrom(server, host, '/gone')).status, 410);
      const refused = await post({ name: 'bad', addr: origin.port, policy: { requestHeaderAdd: ['Forwarded: for=6.6.6.6'] } });
      assert.equal(refused.status, 400);
      assert.match(refused.json.message!, /requestHeaderAdd: Forwarded is a forwarding header the edge sets/);
    } finally {
      await agent.close();
      await origin.close();
      await server.close();
    }
  });
});

describe('svc config check on policy entries', () => {
  it('reports each bad entry as file:line:column key: message', async () => {
    const temp = await tempDir('svc-policy-check-');
    try {
      const file = path.join(temp.dir, 'svc.yml');
      await writeFile(
        file,
        [
          'tunnels:',
          '  web:',
          '    addr: 3000',
          '    policy:',
          '      requestHeaderRemove: [X-Forwarded-Proto]',
          '      rateLimit: 10/1d',
          '      rules:',
          '        - match: { pathRegex: "(a)\\\\1" }',
          '          respond: { status: 200 }',
          '  api:',
          '    addr: 3001',
          '    policy:',
          '      rules:',
          '        - match: { pathRegex: "^/docs/(\\\\w+)$" }',
          '          redirect: { to: "/d/$2" }',
        ].join('\n'),
      );
      const result = await runAgent(['config', 'check', '--config', file], {});
      assert.notEqual(result.code, 0);
      const output = `${result.stdout}\n${result.stderr}`;
      assert.match(
        output,
        new RegExp(
          `${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:5:\\d+ tunnels\\.web\\.policy\\.requestHeaderRemove: X-Forwarded-Proto is a forwarding header`,
        ),
      );
      assert.match(output, /:6:\d+ tunnels\.web\.policy\.rateLimit: "10\/1d": expected count\/window/);
      assert.match(
        output,
        /:8:\d+ tunnels\.web\.policy\.rules\.0\.match\.pathRegex: not a regular expression RE2 accepts \(no lookarounds, no backreferences\)/,
      );
      assert.match(output, /:15:\d+ tunnels\.api\.policy\.rules\.0\.redirect\.to: \$2 refers to group 2, the pattern has 1 group/);
    } finally {
      await temp.remove();
    }
  });
});
