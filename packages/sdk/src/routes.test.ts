import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode, MAX_ROUTES, type SvcError, type CallbackStream } from '@svcrouter/protocol';
import type { OriginProxy } from './origin-proxy.js';
import { checkedRoutes, parseRouteFlag, RoutedProxy, routeSpecs } from './routes.js';

test('the one-line form parses a path, a target and the per-route options', () => {
  assert.deepEqual(parseRouteFlag('/api=4000'), { path: '/api', addr: '4000' });
  assert.deepEqual(parseRouteFlag('/ws=localhost:9000,host-header=rewrite,proto=h2'), {
    path: '/ws',
    addr: 'localhost:9000',
    hostHeader: 'rewrite',
    proto: 'h2',
  });
  assert.deepEqual(parseRouteFlag('/a=https://127.0.0.1:8443,host-header=app.internal:80'), {
    path: '/a',
    addr: 'https://127.0.0.1:8443',
    hostHeader: 'app.internal:80',
  });
});

test('a bad one-line route says what is wrong', () => {
  assert.equal(parseRouteFlag('/api'), 'invalid route "/api": expected <path>=<target>, such as /api=4000');
  assert.equal(parseRouteFlag('=4000'), 'invalid route "=4000": expected <path>=<target>, such as /api=4000');
  assert.equal(parseRouteFlag('/api='), 'route /api: a target is needed, such as 4000 or localhost:4000');
  assert.equal(
    parseRouteFlag('/api=4000,color=red'),
    'invalid route "/api=4000,color=red": unknown option "color" (expected host-header or proto)',
  );
  assert.equal(parseRouteFlag('/api=4000,proto=h3'), 'route /api: proto takes "http1" or "h2", not "h3"');
  assert.match(parseRouteFlag('/api=4000,host-header=a b') as string, /^route \/api: invalid host header "a b"/);
  assert.match(parseRouteFlag('/api=70000') as string, /^route \/api: invalid local/);
  assert.equal(parseRouteFlag('api=4000'), 'invalid route path "api": must start with /');
});

test('checkedRoutes refuses repeated paths (trailing slash or not) and too many routes as NAME_INVALID', () => {
  const refusal = (routes: Parameters<typeof checkedRoutes>[0]): SvcError => {
    try {
      checkedRoutes(routes);
    } catch (error) {
      return error as SvcError;
    }
    assert.fail('expected a refusal');
  };
  const twice = refusal([
    { path: '/api', addr: 4000 },
    { path: '/api/', addr: 4001 },
  ]);
  assert.equal(twice.code, ErrorCode.NAME_INVALID);
  assert.equal(twice.message, 'route path "/api" is given twice');
  const many = refusal(Array.from({ length: MAX_ROUTES + 1 }, (_, i) => ({ path: `/r${i}`, addr: 4000 })));
  assert.equal(many.message, `at most ${MAX_ROUTES} routes per tunnel, not ${MAX_ROUTES + 1}`);
  assert.deepEqual(checkedRoutes(undefined), []);
});

test('the bind carries each route as its normalised path and host:port', () => {
  const routes = checkedRoutes([
    { path: '/api/', addr: 4000 },
    { path: '/ws', addr: 'h2c://127.0.0.1:9000' },
  ]);
  assert.deepEqual(routeSpecs(routes), [
    { path: '/api', local: 'localhost:4000' },
    { path: '/ws', local: '127.0.0.1:9000' },
  ]);
  assert.equal(routes[1]!.target.proto, 'h2');
});

test('a RoutedProxy hands each stream to its route, the rest to the main target, and closes them all', async () => {
  const handled: string[] = [];
  const closed: string[] = [];
  const fake = (name: string) =>
    ({
      handle: (stream: CallbackStream) => handled.push(`${name} ${(stream.meta as { p: string }).p}`),
      close: () => (closed.push(name), Promise.resolve()),
    }) as unknown as OriginProxy;
  const proxy = new RoutedProxy(fake('main'), [
    { path: '/api', proxy: fake('api') },
    { path: '/api/v2', proxy: fake('v2') },
  ]);
  for (const p of ['/', '/api', '/api/v2/x', '/apix', '/api?x'])
    proxy.handle({ meta: { m: 'GET', p, h: [], t: 't' } } as unknown as CallbackStream);
  assert.deepEqual(handled, ['main /', 'api /api', 'v2 /api/v2/x', 'main /apix', 'api /api?x']);
  await proxy.close();
  assert.deepEqual(closed.sort(), ['api', 'main', 'v2']);
});
