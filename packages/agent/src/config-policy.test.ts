import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildPolicy } from '@svcrouter/sdk';
import { parseCommand } from './args.js';
import { formatProblems, parseConfig } from './config-file.js';
import { trafficOptionsOf } from './traffic-flags.js';

const FILE = `version: 1
tunnels:
  flat:
    addr: 3000
    requestHeaderAdd: ["X-Env: dev"]
    responseHeaderRemove: [Server]
    rateLimit: 100/1m
    rules:
      - match: { path: /old }
        redirect: { to: /new, status: 301 }
  block:
    addr: 3000
    policy:
      cidrAllow: [127.0.0.1]
      requestHeaderAdd: ["X-Env: dev"]
      responseHeaderRemove: [Server]
      rateLimit: 100/1m
      rules:
        - match: { path: /old }
          redirect: { to: /new, status: 301 }
`;

test('flags, flat keys and a policy: block compile to the same policy', async () => {
  const parsed = parseConfig(FILE);
  assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.problems));
  const flat = await buildPolicy(trafficOptionsOf(parsed.config.tunnels.flat!));
  const block = await buildPolicy(trafficOptionsOf(parsed.config.tunnels.block!));
  const command = parseCommand([
    'http',
    '3000',
    '--request-header-add',
    'X-Env: dev',
    '--response-header-remove',
    'Server',
    '--rate-limit',
    '100/1m',
  ]);
  assert.ok(typeof command === 'object' && command.kind === 'http');
  const fromFlags = await buildPolicy(command.tunnel);
  const expected = {
    requestHeaderAdd: ['X-Env: dev'],
    responseHeaderRemove: ['Server'],
    rateLimit: { count: 100, windowMs: 60_000 },
  };
  assert.deepEqual(fromFlags, expected);
  assert.deepEqual(flat, { ...expected, rules: [{ match: { path: '/old' }, redirect: { to: '/new', status: 301 } }] });
  // The block holds the access keys too (cidrAllow is access: the block passes it through as given).
  assert.deepEqual(block, { ...flat, cidrAllow: ['127.0.0.1'] });
});

test('a bad policy entry is reported at file:line:column with its key path', () => {
  const parsed = parseConfig(`tunnels:
  web:
    addr: 3000
    policy:
      requestHeaderAdd: ["X-Forwarded-For: 1.2.3.4"]
      rules:
        - match: { path: /a }
          redirect: { to: "ftp://x" }
      nope: 1
  flat:
    addr: 3001
    rateLimit: 100/1y
`);
  assert.ok(!parsed.ok);
  const text = formatProblems('svc.yml', parsed.problems);
  assert.match(text, /^svc\.yml:5:\d+ tunnels\.web\.policy\.requestHeaderAdd: X-Forwarded-For is a forwarding header the edge sets/m);
  assert.match(text, /^svc\.yml:9:7 tunnels\.web\.policy\.nope: unknown key \(expected one of: basicAuth, .*rules\)$/m);
  assert.match(text, /^svc\.yml:12:\d+ tunnels\.flat\.rateLimit: "100\/1y": expected count\/window/m);
});

test('the rules of a block are located at the rule and key at fault', () => {
  const parsed = parseConfig(`tunnels:
  web:
    addr: 3000
    policy:
      rules:
        - match: { path: /a }
          redirect: { to: "ftp://x" }
`);
  assert.ok(!parsed.ok);
  assert.equal(
    formatProblems('svc.yml', parsed.problems),
    'svc.yml:7:27 tunnels.web.policy.rules.0.redirect.to: expected a path (/…) or an http(s):// URL',
  );
});

test('a key given on the tunnel and in its block is refused; traffic rules are HTTP only', () => {
  const both = parseConfig(`tunnels:
  web:
    addr: 3000
    rateLimit: 5/1s
    policy:
      rateLimit: 5/1s
`);
  assert.ok(!both.ok);
  assert.match(formatProblems('f', both.problems), /rateLimit: given both as a key of its own and in policy/);
  const tcp = parseConfig(`tunnels:
  db:
    addr: 5432
    proto: tcp
    rateLimit: 5/1s
`);
  assert.ok(!tcp.ok);
  assert.match(formatProblems('f', tcp.problems), /f:5:\d+ tunnels\.db\.rateLimit: applies to HTTP tunnels only/);
});

test('traffic flags say which flag is wrong', () => {
  assert.match(parseCommand(['http', '3000', '--rate-limit', 'lots']) as string, /^--rate-limit: "lots": expected count\/window/);
  assert.match(
    parseCommand(['http', '3000', '--request-header-remove', 'X-Svc-Identity']) as string,
    /^--request-header-remove: X-Svc-Identity is a forwarding header/,
  );
  assert.match(parseCommand(['http', '3000', '--verify-webhook', 'gitlab:x']) as string, /^--verify-webhook: unknown provider "gitlab"/);
  assert.match(
    parseCommand(['http', '3000', '--verify-webhook-max-body', '1MiB']) as string,
    /^--verify-webhook-max-body: needs verifyWebhook/,
  );
  const ok = parseCommand(['http', '3000', '--verify-webhook', 'github:s3cret', '--verify-webhook-max-body', '2MiB']);
  assert.ok(typeof ok === 'object' && ok.kind === 'http');
  assert.equal(ok.tunnel.verifyWebhook, 'github:s3cret');
});
