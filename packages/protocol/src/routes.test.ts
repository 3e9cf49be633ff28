import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_ROUTES, normalizeRoutePath, routePathProblem, routesFromJson, routesProblem, RouteTable } from './routes.js';

const table = new RouteTable([
  { path: '/api', target: 'api' },
  { path: '/api/v2/', target: 'v2' },
  { path: '/ws', target: 'ws' },
]);

test('the longest matching prefix wins, whatever the order routes were given in', () => {
  assert.equal(table.match('/api/v2/users'), 'v2');
  assert.equal(table.match('/api/v1/users'), 'api');
  assert.equal(table.match('/api/v2'), 'v2');
  assert.equal(table.match('/ws'), 'ws');
});

test('a route matches on segment boundaries only: /api takes /api, /api/ and /api?q, never /apix', () => {
  assert.equal(table.match('/api'), 'api');
  assert.equal(table.match('/api/'), 'api');
  assert.equal(table.match('/api?x=1'), 'api');
  assert.equal(table.match('/apix'), undefined);
  assert.equal(table.match('/api/v2x'), 'api');
});

test('paths that match no route go to the main target, compared case-sensitively as sent', () => {
  assert.equal(table.match('/'), undefined);
  assert.equal(table.match('/index.html'), undefined);
  assert.equal(table.match('/API'), undefined);
  assert.equal(table.match('*'), undefined);
  assert.equal(new RouteTable<string>([]).match('/api'), undefined);
});

test('trailing slashes of a route path are dropped: /api/ and /api are one route', () => {
  assert.equal(normalizeRoutePath('/api/'), '/api');
  assert.equal(normalizeRoutePath('/api//'), '/api');
  assert.equal(normalizeRoutePath('/api'), '/api');
  assert.equal(new RouteTable([{ path: '/api/', target: 1 }]).match('/api'), 1);
});

test('bad route paths are refused with a sentence saying why', () => {
  assert.equal(routePathProblem('/api'), undefined);
  assert.equal(routePathProblem('/a-b/c_d.e~f/@x:1'), undefined);
  assert.match(routePathProblem('')!, /needs a path/);
  assert.match(routePathProblem('api')!, /must start with \//);
  assert.match(routePathProblem('/api?x')!, /no spaces, \? or #/);
  assert.match(routePathProblem('/a b')!, /no spaces/);
  assert.match(routePathProblem('/')!, /whole site/);
  assert.match(routePathProblem('//')!, /whole site/);
  assert.match(routePathProblem('/a//b')!, /empty segment/);
  assert.match(routePathProblem('/a/../b')!, /\. or \.\. segments/);
  assert.match(routePathProblem(`/${'a'.repeat(300)}`)!, /longer than 256/);
});

test('a list of routes is refused for duplicates (after normalisation), bad targets and its size', () => {
  assert.equal(routesProblem([{ path: '/api', local: 'localhost:4000' }]), undefined);
  assert.match(
    routesProblem([
      { path: '/api', local: 'a:1' },
      { path: '/api/', local: 'b:2' },
    ])!,
    /"\/api" is given twice/,
  );
  assert.match(routesProblem([{ path: '/api', local: '' }])!, /host:port/);
  assert.match(routesProblem('x')!, /must be a list/);
  const many = Array.from({ length: MAX_ROUTES + 1 }, (_, i) => ({ path: `/r${i}`, local: 'a:1' }));
  assert.match(routesProblem(many)!, /at most 32 routes/);
});

test('routes kept as JSON read back as a list; none, or text that is not a valid list, reads as undefined', () => {
  const routes = [{ path: '/api', local: 'localhost:4000' }];
  assert.deepEqual(routesFromJson(JSON.stringify(routes)), routes);
  assert.deepEqual(routesFromJson(JSON.stringify([{ ...routes[0], extra: 1 }])), routes);
  for (const bad of [undefined, '', '[]', '{', '{"path":"/api"}', '[{"path":"api","local":"a:1"}]', '[{"path":"/api","local":7}]']) {
    assert.equal(routesFromJson(bad), undefined, String(bad));
  }
});
