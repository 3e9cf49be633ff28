import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { InspectedRequest } from '@svcrouter/sdk';
import {
  AGENT_BIN,
  runAgent,
  spawnNode,
  startOrigin,
  startServer,
  tempDir,
  visit,
  type TestOrigin,
  type TestServer,
} from './harness/index.js';

/** A token of the right shape that no account holds. */
const UNKNOWN_TOKEN = `svc_${'x'.repeat(43)}`;

// `svc start --config svc.yml` runs several named tunnels over one session.
describe('config file', () => {
  let server: TestServer;
  let web: TestOrigin;
  let api: TestOrigin;
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let file: string;

  before(async () => {
    server = await startServer();
    web = await startOrigin();
    api = await startOrigin();
    temp = await tempDir('svc-config-');
    file = path.join(temp.dir, 'svc.yml');
    await writeFile(
      file,
      [
        `token: ${server.token}`,
        `server: ${server.url}`,
        'tunnels:',
        '  web:',
        `    addr: ${web.port}`,
        '    subdomain: cfg-web',
        '  api:',
        `    addr: http://localhost:${api.port}`,
        '    subdomain: cfg-api',
        '    hostHeader: rewrite',
      ].join('\n'),
    );
  });
  after(async () => {
    await web?.close();
    await api?.close();
    await server?.close();
    await temp?.remove();
  });

  it('starts every tunnel of the file over one session, each forwarding to its own target', async () => {
    const agent = spawnNode(AGENT_BIN, ['start', '--config', file], {}, 'agent');
    try {
      await agent.waitForLine(new RegExp(`^Forwarding https://cfg-web\\.localhost:\\d+ -> http://localhost:${web.port}$`));
      await agent.waitForLine(new RegExp(`^Forwarding https://cfg-api\\.localhost:\\d+ -> http://localhost:${api.port}$`));
      assert.equal((await visit(server, 'cfg-web.localhost', '/from-web')).status, 200);
      assert.equal((await visit(server, 'cfg-api.localhost', '/from-api')).status, 200);
      assert.equal(web.seen.at(-1)!.url, '/from-web');
      assert.equal(api.seen.at(-1)!.url, '/from-api');
      assert.equal(api.seen.at(-1)!.headers.host, `localhost:${api.port}`, "the tunnel's hostHeader applies");
      await agent.waitForLine(/ \[web\] GET \/from-web 200 /);
      await agent.waitForLine(/ \[api\] GET \/from-api 200 /);
      const tunnels = await fetch(`${server.url}/v1/tunnels`, { headers: { authorization: `Bearer ${server.token}` } });
      const online = ((await tunnels.json()) as { tunnels: Array<{ status: string }> }).tunnels.filter((t) => t.status === 'online');
      assert.equal(online.length, 2);
    } finally {
      assert.equal((await agent.kill('SIGINT')).code, 0);
    }
  });

  it('names pick tunnels; SVC_TOKEN overrides the file; an unknown name is a usage error', async () => {
    const overridden = path.join(temp.dir, 'other-token.yml');
    await writeFile(
      overridden,
      `token: ${UNKNOWN_TOKEN}\nserver: ${server.url}\ntunnels:\n  web:\n    addr: ${web.port}\n  api:\n    addr: ${api.port}\n`,
    );
    const agent = spawnNode(AGENT_BIN, ['start', 'api', '--config', overridden], { SVC_TOKEN: server.token! }, 'agent');
    try {
      await agent.waitForLine(new RegExp(`^Forwarding https://\\S+ -> http://localhost:${api.port}$`));
      assert.equal(agent.lines.filter((line) => line.startsWith('Forwarding')).length, 1);
    } finally {
      assert.equal((await agent.kill('SIGINT')).code, 0);
    }
    const unknown = await runAgent(['start', 'nope', '--config', file], {});
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr, 'no tunnel named nope in the config file (it has: web, api)');
  });

  it('inspector options come from the file: its address, the body limit, and tunnels left out of capture', async () => {
    const inspected = path.join(temp.dir, 'inspected.yml');
    await writeFile(
      inspected,
      `token: ${server.token}\nserver: ${server.url}\ninspector:\n  addr: 127.0.0.1:0\n  maxBodyBytes: 4\ntunnels:\n  web:\n    addr: ${web.port}\n  api:\n    addr: ${api.port}\n    inspect: false\n`,
    );
    const agent = spawnNode(AGENT_BIN, ['start', '--config', inspected], {}, 'agent');
    try {
      const inspector = (await agent.waitForLine(/^Inspector (http:\/\/127\.0\.0\.1:\d+)$/))[1]!;
      const webUrl = (await agent.waitForLine(new RegExp(`^Forwarding https://(\\S+?):\\d+ -> http://localhost:${web.port}$`)))[1]!;
      const apiUrl = (await agent.waitForLine(new RegExp(`^Forwarding https://(\\S+?):\\d+ -> http://localhost:${api.port}$`)))[1]!;
      await visit(server, webUrl, '/echo', { method: 'POST', body: 'captured' });
      await visit(server, apiUrl, '/echo', { method: 'POST', body: 'not captured' });
      await agent.waitForLine(/\[api\] POST \/echo 200/);
      await agent.waitForLine(/\[web\] POST \/echo 200/);
      const { requests } = (await (await fetch(`${inspector}/api/requests`)).json()) as { requests: InspectedRequest[] };
      assert.deepEqual(
        requests.map((r) => [new URL(r.tunnel).hostname, r.request.body.size, r.request.body.truncated]),
        [[webUrl, 8, true]],
      );
      assert.equal(Buffer.from(requests[0]!.request.body.base64, 'base64').toString(), 'capt');
      const { tunnels } = (await (await fetch(`${inspector}/api/tunnels`)).json()) as { tunnels: Array<{ url: string; inspect: boolean }> };
      assert.deepEqual(
        tunnels.filter((t) => t.inspect).map((t) => new URL(t.url).hostname),
        [webUrl],
      );
    } finally {
      assert.equal((await agent.kill('SIGINT')).code, 0);
    }
  });

  it('svc config check: a valid file says what it holds; a bad one gets file:line:column key: message for each problem', async () => {
    const good = await runAgent(['config', 'check', '--config', file], {});
    assert.deepEqual([good.code, good.stdout], [0, `${file} is valid: 2 tunnels (web, api)`]);
    const bad = path.join(temp.dir, 'bad.yml');
    await writeFile(bad, 'server: ftp://x\ntunnels:\n  web:\n    addr: 3000\n    hostheader: rewrite\n  api: {}\n');
    const result = await runAgent(['config', 'check', '--config', bad], {});
    assert.equal(result.code, 1);
    assert.deepEqual(result.stderr.split('\n'), [
      `${bad}:1:9 server: expected an http:// or https:// URL`,
      `${bad}:5:5 tunnels.web.hostheader: unknown key (expected one of: addr, proto, remoteAddr, idleTimeoutMs, proxyProtocol, subdomain, domain, hostHeader, inspect, basicAuth, cidrAllow, cidrDeny, oidc, allowEmail, allowDomain, pool, requestHeaderAdd, requestHeaderRemove, responseHeaderAdd, responseHeaderRemove, rateLimit, verifyWebhook, verifyWebhookMaxBody, rules, routes, policy)`,
      `${bad}:6:8 tunnels.api.addr: required`,
    ]);
    // Access rules: each bad entry at its own position, and never the password it holds.
    const rules = path.join(temp.dir, 'rules.yml');
    await writeFile(rules, 'tunnels:\n  admin:\n    addr: 3000\n    basicAuth: ["alice:tiny-pw"]\n    cidrDeny: [::1, 10.0.0.0/99]\n');
    const checked = await runAgent(['config', 'check', '--config', rules], {});
    assert.equal(checked.code, 1);
    assert.deepEqual(checked.stderr.split('\n'), [
      `${rules}:4:17 tunnels.admin.basicAuth.0: the password of "alice" must have 8 to 128 characters`,
      `${rules}:5:21 tunnels.admin.cidrDeny.1: "10.0.0.0/99": the prefix length must be 0 to 32`,
    ]);
    assert.ok(!checked.stderr.includes('tiny-pw'));
    // Single sign-on rules: a provider name, emails and domains, and allow rules only with oidc.
    const sso = path.join(temp.dir, 'sso.yml');
    await writeFile(
      sso,
      'tunnels:\n  sso:\n    addr: 3000\n    oidc: Google!\n    allowEmail: [alice@example.com, nope]\n  lone:\n    addr: 3001\n    allowDomain: [example.com]\n',
    );
    const ssoChecked = await runAgent(['config', 'check', '--config', sso], {});
    assert.equal(ssoChecked.code, 1);
    assert.deepEqual(ssoChecked.stderr.split('\n'), [
      `${sso}:4:11 tunnels.sso.oidc: expected a provider name: lower-case letters, digits, - and _, at most 32 characters`,
      `${sso}:5:37 tunnels.sso.allowEmail.1: "nope" is not an email address such as a@example.com`,
      `${sso}:8:18 tunnels.lone.allowDomain: needs oidc (the provider visitors sign in with)`,
    ]);
    const missing = await runAgent(['config', 'check', '--config', path.join(temp.dir, 'absent.yml')], {});
    assert.deepEqual([missing.code, missing.stderr], [1, `${path.join(temp.dir, 'absent.yml')}:1:1 cannot read the file (ENOENT)`]);
  });
});
