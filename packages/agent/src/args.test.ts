import assert from 'node:assert/strict';
import { test } from 'node:test';
import { USAGE, parseCommand, parseDuration, parseSize } from './args.js';

test('--proto h2 and --proto http1 are taken for svc http; anything else is refused with a sentence', () => {
  const h2 = parseCommand(['http', '50051', '--proto', 'h2']);
  assert.ok(typeof h2 !== 'string' && h2.kind === 'http');
  assert.equal(h2.tunnel.proto, 'h2');
  const h1 = parseCommand(['http', '3000', '--proto', 'http1']);
  assert.ok(typeof h1 !== 'string' && h1.kind === 'http' && h1.tunnel.proto === 'http1');
  assert.equal(parseCommand(['http', '3000', '--proto', 'h3']), '--proto takes "http1" or "h2", not "h3"');
});

test('the usage names --proto and h2c:// targets', () => {
  assert.match(USAGE, /--proto <http1\|h2>/);
  assert.match(USAGE, /h2c:\/\/host:port/);
});

test('--host-header takes rewrite or a host with an optional port; anything else is refused with the reason', () => {
  const rewrite = parseCommand(['http', '5173', '--host-header', 'rewrite']);
  assert.ok(typeof rewrite !== 'string' && rewrite.kind === 'http' && rewrite.tunnel.hostHeader === 'rewrite');
  const value = parseCommand(['http', '5173', '--host-header', 'app.internal:8080']);
  assert.ok(typeof value !== 'string' && value.kind === 'http' && value.tunnel.hostHeader === 'app.internal:8080');
  assert.equal(
    parseCommand(['http', '5173', '--host-header', 'a\r\nX-Evil: 1']),
    '--host-header: invalid host header "a\\r\\nX-Evil: 1": expected "rewrite" or a host name, optionally with :port',
  );
  assert.equal(
    parseCommand(['http', '5173', '--host-header', ' ']),
    '--host-header: invalid host header " ": expected "rewrite" or a host name, optionally with :port',
  );
});

test('svc doctor: 100 MiB by default, --transfer-size in bytes or KiB/MiB/GiB, and --json', () => {
  assert.deepEqual(parseCommand(['doctor']), { kind: 'doctor', json: false, transferBytes: 100 * 1024 * 1024 });
  assert.deepEqual(parseCommand(['doctor', '--json', '--transfer-size', '64KiB']), { kind: 'doctor', json: true, transferBytes: 65536 });
  assert.equal(parseSize('1048576'), 1048576);
  assert.equal(parseSize('2GiB'), 2 * 1024 ** 3);
  for (const bad of ['', '1.5MiB', '10MB', '-1', '11GiB']) assert.equal(parseSize(bad), undefined, bad);
  assert.equal(
    parseCommand(['doctor', '--transfer-size', '10MB']),
    '--transfer-size takes a size such as 1048576, 64KiB or 100MiB, not "10MB"',
  );
  assert.equal(parseCommand(['doctor', 'extra']), 'svc doctor takes no arguments');
});

test('--basic-auth, --cidr-allow and --cidr-deny repeat; a bad one is refused naming its flag, never the password', () => {
  const ok = parseCommand([
    'http',
    '3000',
    '--basic-auth',
    'alice:correct-horse',
    '--basic-auth',
    'bob:battery-staple',
    '--cidr-allow',
    '10.0.0.0/8',
    '--cidr-deny',
    '::1',
  ]);
  assert.ok(typeof ok !== 'string' && ok.kind === 'http');
  assert.deepEqual(ok.tunnel.basicAuth, ['alice:correct-horse', 'bob:battery-staple']);
  assert.deepEqual(ok.tunnel.cidrAllow, ['10.0.0.0/8']);
  assert.deepEqual(ok.tunnel.cidrDeny, ['::1']);
  assert.equal(
    parseCommand(['http', '3000', '--basic-auth', 'alice:short7']),
    '--basic-auth: the password of "alice" must have 8 to 128 characters',
  );
  assert.equal(parseCommand(['http', '3000', '--basic-auth', 'nocolon']), '--basic-auth: expected user:password');
  assert.equal(
    parseCommand(['http', '3000', '--cidr-deny', '10.0.0.0/99']),
    '--cidr-deny: "10.0.0.0/99": the prefix length must be 0 to 32',
  );
  const eleven = Array.from({ length: 11 }, (_, i) => ['--basic-auth', `user${i}:long-enough`]).flat();
  assert.equal(parseCommand(['http', '3000', ...eleven]), '--basic-auth: at most 10 user:password pairs');
});

test('svc tcp takes one address and its flags; --idle-timeout reads durations', () => {
  assert.deepEqual(parseCommand(['tcp', '22', '--idle-timeout', '15m', '--proxy-protocol', 'v2', '--remote-addr', 'localhost:20001']), {
    kind: 'tcp',
    target: '22',
    tcp: { idleTimeoutMs: 900_000, proxyProtocol: 'v2', remoteAddr: 'localhost:20001' },
    display: { logStdout: false, json: false },
  });
  assert.equal(parseCommand(['tcp', '22', '--proxy-protocol', 'v3']), '--proxy-protocol takes "v1" or "v2", not "v3"');
  assert.equal(parseCommand(['tcp']), 'svc tcp takes exactly one local address');
  assert.equal(parseDuration('0'), 0);
  assert.equal(parseDuration('250ms'), 250);
  assert.equal(parseDuration('1h'), 3_600_000);
  assert.equal(parseDuration('1d'), undefined);
});

test('--idle-timeout refuses what no Node timer can wait: a bare number is seconds', () => {
  const tooLong = (given: string) =>
    `--idle-timeout ${given} is too long: at most 2147483647ms (about 24 days), the longest timer Node keeps; 0 never closes an idle connection`;
  assert.equal(parseCommand(['tcp', '22', '--idle-timeout', '999999999h']), tooLong('999999999h'));
  assert.equal(parseCommand(['tcp', '22', '--idle-timeout', '2147484']), tooLong('2147484'));
  assert.deepEqual((parseCommand(['tcp', '22', '--idle-timeout', '596h']) as { tcp: unknown }).tcp, {
    idleTimeoutMs: 2_145_600_000,
  });
  assert.deepEqual((parseCommand(['tcp', '22', '--idle-timeout', '2147483']) as { tcp: unknown }).tcp, { idleTimeoutMs: 2_147_483_000 });
});

test('svc tls takes one address, a name, its own certificate and PROXY protocol; access rules are refused', () => {
  assert.deepEqual(
    parseCommand(['tls', '9443', '--subdomain', 'db', '--tls-cert', 'c.pem', '--tls-key', 'k.pem', '--proxy-protocol', 'v1', '--pool']),
    {
      kind: 'tcp',
      target: '9443',
      tcp: { tls: { subdomain: 'db', certFile: 'c.pem', keyFile: 'k.pem' }, pool: true, proxyProtocol: 'v1' },
      display: { logStdout: false, json: false },
    },
  );
  assert.equal(parseCommand(['tls']), 'svc tls takes exactly one local address');
  assert.equal(parseCommand(['tls', '9443', '--tls-cert', 'c.pem']), '--tls-cert needs --tls-key');
  assert.equal(parseCommand(['tls', '9443', '--tls-key', 'k.pem']), '--tls-key needs --tls-cert');
  assert.match(
    String(parseCommand(['tls', '9443', '--cidr-allow', '10.0.0.0/8'])),
    /^--cidr-allow: access rules cannot apply to a TLS tunnel/,
  );
  assert.match(String(parseCommand(['tls', '9443', '--oidc', 'google'])), /^--oidc: access rules cannot apply to a TLS tunnel/);
  assert.match(String(parseCommand(['tls', '9443', '--remote-addr', 'localhost:20001'])), /^--remote-addr is for svc tcp/);
  assert.equal(parseCommand(['tcp', '22', '--tls-cert', 'c.pem', '--tls-key', 'k.pem']), '--tls-cert is for svc tls');
});

test('a flag given to a command it does not belong to is a usage error, never ignored', () => {
  for (const flag of ['--cidr-allow', '--cidr-deny', '--basic-auth', '--oidc', '--allow-email', '--allow-domain']) {
    assert.match(
      String(parseCommand(['tcp', '22', flag, 'x'])),
      new RegExp(`^${flag}: access rules apply to HTTP tunnels only: a TCP tunnel's port passes every visitor's connection`),
    );
  }
  assert.equal(parseCommand(['tcp', '22', '--rate-limit', '1/1m']), '--rate-limit is for svc http');
  assert.equal(parseCommand(['tls', '9443', '--request-header-add', 'A: b']), '--request-header-add is for svc http');
  assert.equal(parseCommand(['tcp', '22', '--route', '/api=4000']), '--route is for svc http');
  assert.equal(parseCommand(['tcp', '22', '--host-header', 'rewrite']), '--host-header is for svc http');
  assert.match(String(parseCommand(['tcp', '22', '--subdomain', 'db'])), /^--subdomain is for svc http and svc tls; svc tcp binds a port/);
  assert.equal(parseCommand(['http', '3000', '--remote-addr', 'localhost:20001']), '--remote-addr is for svc tcp');
  assert.equal(parseCommand(['http', '3000', '--proxy-protocol', 'v1']), '--proxy-protocol is for svc tcp and svc tls');
  assert.equal(parseCommand(['http', '3000', '--idle-timeout', '5m']), '--idle-timeout is for svc tcp and svc tls');
  assert.equal(parseCommand(['http', '3000', '--config', 'svc.yml']), '--config is for svc start and svc config check');
  assert.equal(parseCommand(['doctor', '--pool']), '--pool is for svc http, svc tcp and svc tls');
  assert.equal(parseCommand(['start', '--config', 'svc.yml', '--json']), '--json is for svc doctor');
  assert.equal(parseCommand(['version', '--json']), '--json is for svc doctor');
  assert.equal(parseCommand(['version', 'now']), 'svc version takes no arguments');
  assert.deepEqual(parseCommand(['version']), { kind: 'version' });
  // --version wins over everything else, as in most tools.
  assert.deepEqual(parseCommand(['http', '3000', '--version']), { kind: 'version' });
  // Flags of every command stay accepted everywhere.
  assert.equal(typeof parseCommand(['tcp', '22', '--log', 'stdout', '--log-format', 'json', '--inspect=false']), 'object');
});

test('--inspect-addr: loopback only, refused while parsing', () => {
  for (const addr of ['127.0.0.1:4040', '127.0.0.2:0', 'localhost:4041', '[::1]:4040']) {
    const parsed = parseCommand(['http', '3000', '--inspect-addr', addr]);
    assert.equal(typeof parsed, 'object', addr);
  }
  assert.equal(
    parseCommand(['http', '3000', '--inspect-addr', '0.0.0.0:4040']),
    '--inspect-addr must be a loopback address (127.0.0.1, localhost or ::1), not 0.0.0.0',
  );
  assert.equal(
    parseCommand(['tcp', '22', '--inspect-addr', '[::]:4040']),
    '--inspect-addr must be a loopback address (127.0.0.1, localhost or ::1), not ::',
  );
  // Even with the inspector off: the address is wrong either way, as in `svc config check`.
  assert.equal(
    parseCommand(['http', '3000', '--inspect=false', '--inspect-addr', '192.168.1.5:4040']),
    '--inspect-addr must be a loopback address (127.0.0.1, localhost or ::1), not 192.168.1.5',
  );
  for (const addr of ['4040', 'localhost', 'localhost:99999', ':4040', '127.0.0.1:40 40']) {
    assert.equal(parseCommand(['http', '3000', '--inspect-addr', addr]), `invalid --inspect-addr "${addr}": expected host:port`, addr);
  }
});
