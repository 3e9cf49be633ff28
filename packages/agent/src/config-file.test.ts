import assert from 'node:assert/strict';
import { test } from 'node:test';
import { idleTimeoutTooLong } from '@svcrouter/sdk';
import { formatProblems, parseConfig, type ConfigProblem } from './config-file.js';

const TOKEN = `svc_${'a'.repeat(43)}`;

function problems(text: string): ConfigProblem[] {
  const result = parseConfig(text);
  assert.equal(result.ok, false, 'expected problems');
  return result.ok ? [] : result.problems;
}

test('a full file parses into typed tunnels and inspector options', () => {
  const result = parseConfig(
    [
      `token: ${TOKEN}`,
      'server: https://tunnels.example.com',
      'inspector:',
      '  addr: 127.0.0.1:4141',
      '  maxBodyBytes: 1024',
      'tunnels:',
      '  web:',
      '    addr: 5173',
      '    hostHeader: rewrite',
      '    subdomain: myapp',
      '  api:',
      '    addr: http://localhost:3000',
      '    domain: example.com',
      '    inspect: false',
      '  grpc:',
      '    addr: 50051',
      '    proto: h2',
    ].join('\n'),
  );
  assert.ok(result.ok);
  assert.deepEqual(result.config, {
    token: TOKEN,
    server: 'https://tunnels.example.com',
    inspector: { addr: '127.0.0.1:4141', maxBodyBytes: 1024 },
    tunnels: {
      web: { addr: 5173, hostHeader: 'rewrite', subdomain: 'myapp' },
      api: { addr: 'http://localhost:3000', domain: 'example.com', inspect: false },
      grpc: { addr: 50051, proto: 'h2' },
    },
  });
});

test('an unknown key is reported at its own line and column, with the keys allowed there', () => {
  const [problem, ...rest] = problems('tunnels:\n  web:\n    addr: 3000\n    hostheader: rewrite\n');
  assert.equal(rest.length, 0);
  assert.deepEqual(problem, {
    line: 4,
    column: 5,
    key: 'tunnels.web.hostheader',
    message:
      'unknown key (expected one of: addr, proto, remoteAddr, idleTimeoutMs, proxyProtocol, tlsCert, tlsKey, subdomain, domain, hostHeader, inspect, basicAuth, cidrAllow, cidrDeny, oidc, allowEmail, allowDomain, pool, requestHeaderAdd, requestHeaderRemove, responseHeaderAdd, responseHeaderRemove, rateLimit, verifyWebhook, verifyWebhookMaxBody, rules, routes, policy)',
  });
});

test("a TCP tunnel's remoteAddr may be the port alone, as YAML reads it: a number", () => {
  const result = parseConfig('tunnels:\n  ssh:\n    addr: 22\n    proto: tcp\n    remoteAddr: 20417\n');
  assert.ok(result.ok);
  assert.equal(result.config.tunnels.ssh!.remoteAddr, '20417');
  assert.deepEqual(
    problems('tunnels:\n  ssh:\n    addr: 22\n    proto: tcp\n    remoteAddr: 70000\n').map((p) => [p.line, p.key, p.message]),
    [[5, 'tunnels.ssh.remoteAddr', 'a port is a whole number from 1 to 65535']],
  );
});

test('a setting of another kind of tunnel is reported, not ignored', () => {
  assert.deepEqual(
    problems('tunnels:\n  web:\n    addr: 3000\n    remoteAddr: "20001"\n    proxyProtocol: v1\n').map((p) => [p.line, p.key, p.message]),
    [
      [4, 'tunnels.web.remoteAddr', 'applies to proto: tcp only, not an HTTP tunnel'],
      [5, 'tunnels.web.proxyProtocol', 'applies to proto: tcp and proto: tls only, not an HTTP tunnel'],
    ],
  );
  assert.deepEqual(
    problems('tunnels:\n  ssh:\n    addr: 22\n    proto: tcp\n    subdomain: db\n').map((p) => [p.line, p.key, p.message]),
    [
      [
        5,
        'tunnels.ssh.subdomain',
        'applies to HTTP and TLS tunnels, not proto: tcp (it binds a port; remoteAddr for one the account reserved)',
      ],
    ],
  );
});

test('an idle timeout out of range gets one message, the one for its fault', () => {
  const of = (value: string): string[] =>
    problems(`tunnels:\n  ssh:\n    addr: 22\n    proto: tcp\n    idleTimeoutMs: ${value}\n`).map((p) => `${p.line} ${p.message}`);
  assert.deepEqual(of('1e20'), [`5 ${idleTimeoutTooLong()}`]);
  assert.deepEqual(of('1.5'), ['5 expected a whole number of ms']);
  assert.deepEqual(of('-1'), ['5 expected 0 (never) or more ms']);
});

test('a proto other than http1 or h2 is reported at its value', () => {
  const [problem] = problems('tunnels:\n  grpc:\n    addr: 50051\n    proto: h3\n');
  assert.equal(problem!.line, 4);
  assert.equal(problem!.key, 'tunnels.grpc.proto');
});

test('a bad value is reported at the value, with the reason; a missing one at its map', () => {
  assert.deepEqual(
    problems('tunnels:\n  web:\n    addr: [1]\n').map((p) => [p.line, p.key, p.message]),
    [[3, 'tunnels.web.addr', 'expected a port, host:port or URL']],
  );
  const found = problems(`token: "svc_short"\ntunnels:\n  web:\n    addr: 99999\n  api:\n    subdomain: x\n`);
  assert.deepEqual(
    found.map((p) => [p.line, p.column, p.key, p.message]),
    [
      [1, 8, 'token', 'not an agent token (svc_ followed by 43 letters, digits, - or _)'],
      [4, 11, 'tunnels.web.addr', 'invalid local address "99999": expected a port, host:port or an http(s) URL'],
      [6, 5, 'tunnels.api.addr', 'required'],
    ],
  );
});

test('an idleTimeoutMs longer than a Node timer can wait is reported at its value', () => {
  assert.deepEqual(
    problems('tunnels:\n  ssh:\n    addr: 22\n    proto: tcp\n    idleTimeoutMs: 1e12\n').map((p) => [p.line, p.key, p.message]),
    [
      [
        5,
        'tunnels.ssh.idleTimeoutMs',
        'too long: at most 2147483647ms (about 24 days), the longest timer Node keeps; 0 never closes an idle connection',
      ],
    ],
  );
  assert.equal(parseConfig('tunnels:\n  ssh:\n    addr: 22\n    proto: tcp\n    idleTimeoutMs: 2147483647\n').ok, true);
});

test('a YAML syntax error has its line; an empty file says tunnels are required', () => {
  const [syntax] = problems('tunnels:\n  web: [3000\n');
  assert.equal(syntax!.key, '');
  assert.ok(syntax!.line >= 2, JSON.stringify(syntax));
  assert.deepEqual(
    problems('').map((p) => [p.key, p.message]),
    [['tunnels', 'required']],
  );
  assert.deepEqual(
    problems('tunnels: {}\n').map((p) => [p.line, p.key, p.message]),
    [[1, 'tunnels', 'at least one tunnel is needed']],
  );
});

test('problems print as file:line:column key: message', () => {
  assert.equal(
    formatProblems('svc.yml', [{ line: 4, column: 5, key: 'tunnels.web.x', message: 'unknown key' }]),
    'svc.yml:4:5 tunnels.web.x: unknown key',
  );
});

test('a hostHeader that is neither rewrite nor a host is reported at its value', () => {
  assert.deepEqual(
    problems('tunnels:\n  web:\n    addr: 5173\n    hostHeader: "localhost:5173/app"\n').map((p) => [p.line, p.column, p.key, p.message]),
    [[4, 17, 'tunnels.web.hostHeader', 'expected "rewrite" or a host name, optionally with :port']],
  );
});

test('access rules are checked at their value: file:line:column key: message, never echoing a password', () => {
  const text =
    'tunnels:\n  admin:\n    addr: 3000\n    basicAuth:\n      - "alice:correct-horse"\n      - "bob:short"\n    cidrAllow: [10.0.0.0/8, 10.0.0.0/33]\n';
  const found = problems(text);
  assert.deepEqual(
    found.map((p) => [p.line, p.column, p.key, p.message]),
    [
      [6, 9, 'tunnels.admin.basicAuth.1', 'the password of "bob" must have 8 to 128 characters'],
      [7, 29, 'tunnels.admin.cidrAllow.1', '"10.0.0.0/33": the prefix length must be 0 to 32'],
    ],
  );
  assert.ok(!formatProblems('svc.yml', found).includes('short'));
  assert.match(formatProblems('svc.yml', found), /^svc\.yml:6:9 tunnels\.admin\.basicAuth\.1: /);
});

test('valid access rules load as given', () => {
  const result = parseConfig('tunnels:\n  admin:\n    addr: 3000\n    basicAuth: ["alice:correct-horse"]\n    cidrDeny: ["::1"]\n');
  assert.ok(result.ok);
  assert.deepEqual(result.config.tunnels.admin!.basicAuth, ['alice:correct-horse']);
  assert.deepEqual(result.config.tunnels.admin!.cidrDeny, ['::1']);
});

test('two tunnels asking for one name are reported at the second, unless both are pool members', () => {
  const twice = parseConfig(`tunnels:
  web:
    addr: 3000
    subdomain: app
  api:
    addr: 4000
    subdomain: App
`);
  assert.ok(!twice.ok);
  assert.match(
    formatProblems('f', twice.problems),
    /^f:7:\d+ tunnels\.api\.subdomain: tunnel web asks for App too; give each tunnel its own name$/m,
  );
  const pooled = parseConfig(`tunnels:
  a:
    addr: 3000
    subdomain: app
    pool: true
  b:
    addr: 4000
    subdomain: app
    pool: true
`);
  assert.ok(pooled.ok);
});

test('aliases that multiply (a "billion laughs" file) are one problem, not a crash', () => {
  const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
  for (let i = 1; i < 7; i++) {
    const previous = String.fromCharCode(96 + i);
    const name = String.fromCharCode(97 + i);
    levels.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(',')}]`);
  }
  const found = problems([...levels, 'tunnels:', '  web: {addr: 3000}'].join('\n'));
  assert.deepEqual(found, [
    { line: 1, column: 1, key: '', message: 'too many alias expansions: anchors and aliases that multiply are refused' },
  ]);
});

test('inspector.addr is checked as the inspector checks it: loopback only, a port up to 65535', () => {
  const tunnels = ['tunnels:', '  web: {addr: 3000}'];
  assert.deepEqual(problems(['inspector:', '  addr: 0.0.0.0:4040', ...tunnels].join('\n')), [
    { line: 2, column: 9, key: 'inspector.addr', message: 'must be a loopback address (127.0.0.1, localhost or ::1), not 0.0.0.0' },
  ]);
  assert.deepEqual(problems(['inspector:', '  addr: 127.0.0.1:99999', ...tunnels].join('\n')), [
    { line: 2, column: 9, key: 'inspector.addr', message: 'expected host:port (port 0-65535)' },
  ]);
  assert.ok(parseConfig(['inspector:', '  addr: "[::1]:4040"', ...tunnels].join('\n')).ok);
});

test('a bad tunnel name is pointed at, at its key, with what a name may be', () => {
  const rule = 'a tunnel name is 1-63 letters, digits, - and _, starting with a letter or digit';
  assert.deepEqual(problems(['tunnels:', '  my.web:', '    addr: 3000'].join('\n')), [
    { line: 2, column: 3, key: 'tunnels.my.web', message: rule },
  ]);
  assert.deepEqual(problems(['tunnels:', '  "":', '    addr: 3000'].join('\n')), [{ line: 2, column: 3, key: 'tunnels.', message: rule }]);
});
