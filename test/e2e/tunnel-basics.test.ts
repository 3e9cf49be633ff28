import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Messages, SVC_VERSION } from '@svcrouter/protocol';
import { runAgent, tunnelSuite, visit, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';

describe('a tunnel end to end', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let agent: TestAgent;
  const tunnel = tunnelSuite();
  before(() => {
    ({ server, origin, agent } = tunnel);
  });

  it('prints a random https URL under the shared domain with the local address', () => {
    assert.match(agent.url, new RegExp(`^https://[a-z0-9]{10}\\.localhost:${server.httpsPort}$`));
    assert.ok(agent.proc.lines.some((line) => line === `Forwarding ${agent.url} -> http://localhost:${origin.port}`));
  });

  for (const secure of [false, true]) {
    const scheme = secure ? 'HTTPS' : 'HTTP';
    it(`passes method, path, query, headers and body through over ${scheme}`, async () => {
      const result = await visit(server, agent.hostname, '/echo?x=1&y=%20z', {
        method: 'PATCH',
        secure,
        headers: {
          'x-custom': 'kept',
          'content-type': 'text/plain',
          'x-forwarded-for': '203.0.113.7',
          'x-svc-internal': 'spoof',
          // What proxies give the client's address or scheme in: a visitor's copies never pass.
          'x-real-ip': '6.6.6.6',
          forwarded: 'for=6.6.6.6;proto=https',
          'x-forwarded-port': '1',
          'x-forwarded-prefix': '/evil',
        },
        body: 'hello body',
      });
      assert.equal(result.status, 200);
      const echo = JSON.parse(result.text) as { method: string; url: string; headers: Record<string, string>; bodyLength: number };
      assert.equal(echo.method, 'PATCH');
      assert.equal(echo.url, '/echo?x=1&y=%20z');
      assert.equal(echo.headers['x-custom'], 'kept');
      assert.equal(echo.bodyLength, 'hello body'.length);
      assert.equal(echo.headers.host, `${agent.hostname}:${secure ? server.httpsPort : server.httpPort}`);
      assert.equal(echo.headers['x-forwarded-for'], '203.0.113.7, 127.0.0.1');
      assert.equal(echo.headers['x-forwarded-proto'], secure ? 'https' : 'http');
      assert.equal(echo.headers['x-forwarded-host'], `${agent.hostname}:${secure ? server.httpsPort : server.httpPort}`);
      assert.equal(echo.headers['x-svc-internal'], undefined);
      for (const forged of ['x-real-ip', 'forwarded', 'x-forwarded-port', 'x-forwarded-prefix'])
        assert.equal(echo.headers[forged], undefined, forged);
      // Response headers come back, repeated ones (set-cookie) kept apart.
      assert.equal(result.headers['x-origin'], 'yes');
      assert.deepEqual(result.headers['set-cookie'], ['a=1', 'b=2']);
    });
  }

  it('strips hop-by-hop headers and the headers Connection names', async () => {
    const result = await visit(server, agent.hostname, '/echo', {
      headers: { connection: 'keep-alive, x-drop-me', 'x-drop-me': '1', 'keep-alive': 'timeout=5', te: 'trailers', 'x-keep': '1' },
    });
    const echo = JSON.parse(result.text) as { headers: Record<string, string> };
    assert.equal(echo.headers['x-drop-me'], undefined);
    assert.equal(echo.headers['keep-alive'], undefined);
    assert.equal(echo.headers.te, undefined);
    assert.equal(echo.headers['x-keep'], '1');
  });

  it('routes the Host case-insensitively, ignoring a trailing dot', async () => {
    const result = await visit(server, agent.hostname, '/echo', {
      headers: { host: `${agent.hostname.toUpperCase()}.:${server.httpPort}` },
    });
    assert.equal(result.status, 200);
  });

  it('prints one line per request with time, method, path, status and duration', async () => {
    await visit(server, agent.hostname, '/status/418');
    const line = await agent.proc.waitForLine(/^\d\d:\d\d:\d\d\.\d{3} GET \/status\/418 418 \d+ms$/);
    assert.ok(line);
  });

  it('answers an unknown name with the offline page (404)', async () => {
    const result = await visit(server, 'nobody-here.localhost', '/');
    assert.equal(result.status, 404);
    assert.match(result.text, new RegExp(Messages.TUNNEL_OFFLINE));
  });

  it('serves the apex API: 401 with the exact body without a token', async () => {
    const response = await fetch(`${server.url}/v1/me`);
    assert.equal(response.status, 401);
    assert.equal(await response.text(), '{"error":"unauthorized"}');
  });

  it('prints the version', async () => {
    const result = await runAgent(['version'], {});
    assert.equal(result.code, 0);
    assert.equal(result.stdout.trim(), `svc ${SVC_VERSION}`);
  });
});
