import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode, SvcError } from '@svcrouter/protocol';
import { forward, type ForwardOptions } from './forward.js';
import { misplacedOption, remoteAddrText } from './proto-options.js';

// Nothing listens here: every refusal below comes before forward() dials.
const NOWHERE = { serverUrl: 'http://127.0.0.1:9', token: `svc_${'a'.repeat(43)}`, startAttempts: 1 };

async function refusal(options: Omit<ForwardOptions, 'serverUrl' | 'token'>): Promise<string> {
  try {
    const tunnel = await forward({ ...NOWHERE, ...options });
    await tunnel.close();
  } catch (error) {
    assert.ok(error instanceof SvcError, String(error));
    assert.equal(error.code, ErrorCode.NAME_INVALID, error.message);
    return error.message;
  }
  assert.fail('forward() bound a tunnel it should have refused');
}

test('an option of another kind of tunnel is refused, not dropped', async () => {
  assert.equal(
    await refusal({ proto: 'tcp', addr: 22, subdomain: 'db' }),
    'subdomain does not apply to proto "tcp": a TCP tunnel binds a port (remoteAddr for one the account reserved)',
  );
  assert.equal(
    await refusal({ proto: 'tcp', addr: 22, hostHeader: 'rewrite' }),
    'hostHeader applies to HTTP tunnels only, not proto "tcp"',
  );
  assert.equal(
    await refusal({ proto: 'tcp', addr: 22, tlsCert: 'c.pem', tlsKey: 'k.pem' }),
    'tlsCert applies to proto "tls" only, not proto "tcp"',
  );
  assert.equal(
    await refusal({ proto: 'tls', addr: 443, remoteAddr: 20001 }),
    'remoteAddr does not apply to proto "tls": a TLS tunnel binds a hostname (subdomain, domain)',
  );
  assert.equal(await refusal({ addr: 3000, remoteAddr: '20001' }), 'remoteAddr applies to proto "tcp" only, not an HTTP tunnel');
  assert.equal(
    await refusal({ addr: 3000, proxyProtocol: 'v1' }),
    'proxyProtocol applies to proto "tcp" and "tls" only, not an HTTP tunnel',
  );
  assert.equal(
    await refusal({ addr: 3000, idleTimeoutMs: 1000 }),
    'idleTimeoutMs applies to proto "tcp" and "tls" only, not an HTTP tunnel',
  );
});

test('remoteAddr is host:port or a port, as text or a number', async () => {
  assert.equal(remoteAddrText('svc.example.com:20001'), 'svc.example.com:20001');
  assert.equal(remoteAddrText(20001), '20001');
  for (const bad of ['', ' ', 0, 65536, 1.5, null, {}]) assert.equal(remoteAddrText(bad), undefined, String(bad));
  assert.equal(await refusal({ proto: 'tcp', addr: 22, remoteAddr: 70000 }), 'invalid remoteAddr 70000: expected host:port or a port');
});

test('options every kind takes, and an empty route list, pass', () => {
  assert.equal(misplacedOption({ proto: 'tcp', routes: [] }), undefined);
  assert.equal(
    misplacedOption({ proto: 'tls', subdomain: 'db', idleTimeoutMs: 5, proxyProtocol: 'v2', tlsCert: 'c', tlsKey: 'k' }),
    undefined,
  );
  assert.equal(misplacedOption({ proto: 'h2', subdomain: 'app', hostHeader: 'rewrite', routes: [{ path: '/a', addr: 1 }] }), undefined);
  assert.equal(misplacedOption({ proto: 'tcp', remoteAddr: 20001, idleTimeoutMs: 0, proxyProtocol: 'v1' }), undefined);
});

test('an unknown proto names every one forward() takes', async () => {
  assert.equal(await refusal({ addr: 22, proto: 'udp' as 'tcp' }), 'invalid proto "udp": expected http1, h2, tcp or tls');
});
