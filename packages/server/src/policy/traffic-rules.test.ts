import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EdgeRules } from './edge-rules.js';
import { HeaderRules } from './header-rules.js';
import { LocalRateLimiter } from './rate-limiter.js';
import { compileTraffic } from './traffic-rules.js';

test('header rules remove names case-insensitively and set added ones in place of any sent', () => {
  const rules = new HeaderRules(['X-Env: dev'], ['cookie']);
  assert.deepEqual(rules.apply(['Host', 'a', 'Cookie', 'x=1', 'x-env', 'prod', 'Accept', '*/*']), [
    'Host',
    'a',
    'Accept',
    '*/*',
    'X-Env',
    'dev',
  ]);
});

test('edge rules: the first answer ends the request, a rewrite continues with the new path', () => {
  const rules = new EdgeRules([
    { match: { path: '/old' }, redirect: { to: '/new', status: 301 } },
    { match: { pathRegex: '^/api/(.*)$' }, rewrite: { from: '^/api/(.*)$', to: '/v2/$1' } },
    { match: { path: '/v2/teapot', method: ['POST'] }, respond: { status: 418, body: 'short and stout', headers: { 'X-Tea': 'yes' } } },
    { match: { header: { name: 'x-debug', value: '1' } }, respond: { status: 204 } },
    { match: { pathRegex: '^/docs/(\\w+)' }, redirect: { to: 'https://docs.example.com/$1' } },
  ]);
  const request = (method: string, target: string, headers: string[] = []) => ({ method, target, headers });
  assert.deepEqual(rules.evaluate(request('GET', '/old')), {
    reply: {
      status: 301,
      headers: { location: '/new', 'content-type': 'text/plain; charset=utf-8', 'content-length': '20', 'cache-control': 'no-store' },
      body: 'Redirecting to /new\n',
    },
  });
  // A prefix is a whole segment: /oldies is not /old.
  assert.equal(rules.evaluate(request('GET', '/oldies')), undefined);
  assert.deepEqual(rules.evaluate(request('GET', '/api/users?page=2')), { target: '/v2/users?page=2' });
  assert.deepEqual(new EdgeRules([{ rewrite: { from: '^/a/(.*)$', to: '/b?p=$1' } }]).evaluate(request('GET', '/a/x?q=1')), {
    target: '/b?p=x&q=1',
  });
  const tea = rules.evaluate(request('POST', '/api/teapot'));
  assert.ok(tea && 'reply' in tea);
  assert.equal(tea.reply.status, 418);
  assert.equal(tea.reply.body, 'short and stout');
  assert.equal(tea.reply.headers['x-tea'], 'yes');
  assert.deepEqual(rules.evaluate(request('GET', '/api/teapot')), { target: '/v2/teapot' });
  const debug = rules.evaluate(request('GET', '/x', ['X-Debug', '1']));
  assert.ok(debug && 'reply' in debug && debug.reply.status === 204 && debug.reply.body === '');
  assert.equal(rules.evaluate(request('GET', '/x', ['X-Debug', '0'])), undefined);
  const docs = rules.evaluate(request('GET', '/docs/install'));
  assert.ok(docs && 'reply' in docs);
  assert.equal(docs.reply.status, 302);
  assert.equal(docs.reply.headers.location, 'https://docs.example.com/install');
});

test('edge rules see the path normalised: other spellings of a denied path are denied too', () => {
  const rules = new EdgeRules([
    { match: { path: '/admin' }, respond: { status: 403 } },
    { match: { pathRegex: '^/private/' }, respond: { status: 404 } },
    { match: { pathRegex: '^/old/(\\w+)$' }, redirect: { to: '/new/$1' } },
    { rewrite: { from: '^/api/(.*)$', to: '/v2/$1' } },
  ]);
  const status = (target: string) => {
    const outcome = rules.evaluate({ method: 'GET', target, headers: [] });
    return outcome && 'reply' in outcome ? outcome.reply.status : undefined;
  };
  for (const path of ['/admin/secret.txt', '/%61dmin/secret.txt', '//admin/secret.txt', '/./admin/secret.txt', '/x/../admin/secret.txt']) {
    assert.equal(status(path), 403, path);
    assert.equal(status(`${path}?a=1`), 403, path);
  }
  assert.equal(status('/x/%2e%2e/private/key'), 404);
  // Matching is case-sensitive, and an encoded slash is not a separator.
  assert.equal(status('/Admin'), undefined);
  assert.equal(status('/admin%2Fsecret.txt'), undefined);
  const moved = rules.evaluate({ method: 'GET', target: '//old/%61bc', headers: [] });
  assert.ok(moved && 'reply' in moved);
  assert.equal(moved.reply.headers.location, '/new/abc');
  // A rewrite works on the normalised path; a request no rule changes keeps the visitor's target.
  assert.deepEqual(rules.evaluate({ method: 'GET', target: '/x/../api/%75sers?q=1', headers: [] }), { target: '/v2/users?q=1' });
  assert.equal(rules.evaluate({ method: 'GET', target: '/x/../public?q=1', headers: [] }), undefined);
});

test('edge rule regexes run in linear time on a path that makes V8 backtrack for minutes', () => {
  const rules = new EdgeRules([
    { match: { pathRegex: '^/(\\w?\\w?){13}$' }, respond: { status: 200 } },
    { match: { pathRegex: '^/d/(\\w?\\w?){13}$' }, redirect: { to: '/to/$1' } },
    { rewrite: { from: '^/r/(\\w?\\w?){13}$', to: '/v/$1' } },
  ]);
  const hostile = `${'a'.repeat(28)}!`;
  for (const prefix of ['/', '/d/', '/r/'])
    assert.equal(rules.evaluate({ method: 'GET', target: `${prefix}${hostile}`, headers: [] }), undefined);
  assert.deepEqual(rules.evaluate({ method: 'GET', target: '/r/abc', headers: [] }), { target: '/v/' });
});

test('a policy without traffic rules compiles to nothing; the rate limit keys by host and address', () => {
  const limiter = new LocalRateLimiter();
  assert.equal(compileTraffic({ cidrAllow: ['10.0.0.0/8'] }, { limiter }), undefined);
  const traffic = compileTraffic({ rateLimit: { count: 1, windowMs: 60_000 } }, { limiter })!;
  assert.equal(traffic.rules, undefined);
  assert.equal(traffic.requestHeaders, undefined);
  assert.equal(traffic.admitRate('a.example', '1.2.3.4', 0), true);
  assert.equal(typeof traffic.admitRate('a.example', '1.2.3.4', 1), 'number');
  assert.equal(traffic.admitRate('b.example', '1.2.3.4', 2), true);
  assert.equal(traffic.admitRate('a.example', '5.6.7.8', 3), true);
});
