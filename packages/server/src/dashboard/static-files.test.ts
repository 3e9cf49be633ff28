import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ASSET_CACHE_CONTROL, DASHBOARD_CSP, PAGE_CACHE_CONTROL, createDashboardHandler } from './static-files.js';

// The dashboard's static files on a real loopback server; a path the handler declines gets
// the API's 404, as in the front door.

const INDEX = '<!doctype html><title>svcRouter</title><script type="module" src="/assets/index-AbC123.js"></script>';
const SCRIPT = 'console.log("dashboard");';

async function startStatic(distDir: string): Promise<{ url: string; close(): Promise<void> }> {
  const handle = createDashboardHandler(distDir);
  const server = http.createServer((req, res) => {
    const pathname = (req.url ?? '/').split('?')[0] ?? '/';
    if (handle(req, res, pathname)) return;
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found","from":"api"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A raw request, so paths with `..` reach the server unnormalised. */
function get(url: string, rawPath: string, method = 'GET'): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/`, { method, path: rawPath }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function assertSecurityHeaders(headers: http.IncomingHttpHeaders): void {
  assert.equal(headers['content-security-policy'], DASHBOARD_CSP);
  assert.equal(headers['x-frame-options'], 'DENY');
  assert.equal(headers['referrer-policy'], 'same-origin');
  assert.equal(headers['x-content-type-options'], 'nosniff');
}

describe('dashboard static files', () => {
  let root: string;
  let server: { url: string; close(): Promise<void> };

  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'svc-dashboard-'));
    const dist = path.join(root, 'dist');
    await mkdir(path.join(dist, 'assets', 'nested'), { recursive: true });
    await writeFile(path.join(dist, 'index.html'), INDEX);
    await writeFile(path.join(dist, 'assets', 'index-AbC123.js'), SCRIPT);
    await writeFile(path.join(dist, 'assets', 'index-AbC123.css'), 'body{}');
    await writeFile(path.join(root, 'secret.txt'), 'outside the dist folder');
    server = await startStatic(dist);
  });
  after(async () => {
    await server.close();
    await rm(root, { recursive: true, force: true });
  });

  it('answers the root and every client-side route with index.html, revalidated on each load', async () => {
    for (const route of ['/', '/tunnels', '/traffic', '/welcome', '/some/deep/path']) {
      const res = await get(server.url, route);
      assert.equal(res.status, 200, route);
      assert.equal(res.body, INDEX, route);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(res.headers['cache-control'], PAGE_CACHE_CONTROL);
      assertSecurityHeaders(res.headers);
    }
  });

  it('serves hashed assets with a year of immutable caching and their content type', async () => {
    const script = await get(server.url, '/assets/index-AbC123.js');
    assert.equal(script.status, 200);
    assert.equal(script.body, SCRIPT);
    assert.equal(script.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(script.headers['cache-control'], ASSET_CACHE_CONTROL);
    assertSecurityHeaders(script.headers);
    const style = await get(server.url, '/assets/index-AbC123.css');
    assert.equal(style.headers['content-type'], 'text/css; charset=utf-8');
  });

  it('answers a missing asset with 404 JSON, not the page (a stale hash must not load HTML as a script)', async () => {
    const res = await get(server.url, '/assets/index-Gone99.js');
    assert.equal(res.status, 404);
    assert.deepEqual(JSON.parse(res.body), { error: 'not_found', message: 'no dashboard file at /assets/index-Gone99.js' });
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  it('never serves a file outside the assets folder, however the path is spelled', async () => {
    for (const attempt of [
      '/assets/../../secret.txt',
      '/assets/..%2F..%2Fsecret.txt',
      '/assets/%2e%2e/%2e%2e/secret.txt',
      '/assets/nested',
      '/assets/.%2e',
      '/assets/%E0%A4%A',
    ]) {
      const res = await get(server.url, attempt);
      assert.equal(res.status, 404, attempt);
      assert.doesNotMatch(res.body, /outside the dist folder/, attempt);
    }
    const page = await get(server.url, '/../secret.txt');
    assert.equal(page.body, INDEX);
  });

  it('leaves the API, auth, health and metrics paths and other methods to the API', async () => {
    for (const route of ['/v1', '/v1/nothing', '/auth/session', '/healthz', '/readyz', '/metrics', '/_svc/x']) {
      const res = await get(server.url, route);
      assert.equal(res.status, 404, route);
      assert.match(res.body, /"from":"api"/, route);
    }
    const post = await get(server.url, '/tunnels', 'POST');
    assert.match(post.body, /"from":"api"/);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const res = await get(server.url, '/tokens', 'HEAD');
    assert.equal(res.status, 200);
    assert.equal(res.body, '');
    assert.equal(res.headers['content-length'], String(Buffer.byteLength(INDEX)));
  });

  it('says plainly how to build the dashboard when it is not built', async () => {
    const missing = await startStatic(path.join(root, 'not-built'));
    try {
      const res = await get(missing.url, '/');
      assert.equal(res.status, 503);
      assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
      assert.match(res.body, /dashboard is not built/);
      assert.match(res.body, /npm run build/);
      assertSecurityHeaders(res.headers);
    } finally {
      await missing.close();
    }
  });
});
