import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode, SvcError } from '@svcrouter/protocol';
import type { Binding } from './edge-session.js';
import { routeListOf, routeTableOf, routeTableOfJson, targetOf } from './route-labels.js';

test('a bind without routes gets no table, and its records no target', () => {
  assert.equal(routeTableOf(undefined), undefined);
  assert.equal(routeTableOf([]), undefined);
  assert.equal(targetOf({ local: 'localhost:5173' } as Binding, '/api'), undefined);
  assert.equal(targetOf(undefined, '/api'), undefined);
});

test("a request's target is its longest route's host:port, else the tunnel's own", () => {
  const routes = routeTableOf([
    { path: '/api', local: 'localhost:4000' },
    { path: '/api/v2', local: 'localhost:4002' },
  ]);
  const binding = { local: 'localhost:5173', routes } as Binding;
  assert.equal(targetOf(binding, '/api/v2/x'), 'localhost:4002');
  assert.equal(targetOf(binding, '/api?q'), 'localhost:4000');
  assert.equal(targetOf(binding, '/apix'), 'localhost:5173');
});

test("an agent's bad routes are refused as NAME_INVALID, never trusted", () => {
  for (const [routes, message] of [
    [[{ path: 'api', local: 'a:1' }], /must start with \//],
    [[{ path: '/a', local: 'x'.repeat(201) }], /host:port/],
    [Array.from({ length: 33 }, (_, i) => ({ path: `/r${i}`, local: 'a:1' })), /at most 32/],
    [
      [
        { path: '/a', local: 'a:1' },
        { path: '/a/', local: 'b:1' },
      ],
      /given twice/,
    ],
    ['not a list', /must be a list/],
  ] as const) {
    assert.throws(
      () => routeTableOf(routes as never),
      (error: unknown) => error instanceof SvcError && error.code === ErrorCode.NAME_INVALID && message.test(error.message),
    );
  }
});

test('routes kept as JSON (the tunnels row, a cluster route) label requests as the bind did', () => {
  const list = routeListOf([{ path: '/api/', local: 'localhost:4000', proto: 'h2' } as never])!;
  assert.deepEqual(list, [{ path: '/api/', local: 'localhost:4000' }], 'only what labels a request is kept');
  const binding = { local: 'localhost:5173', routes: routeTableOfJson(JSON.stringify(list)) } as Binding;
  assert.equal(targetOf(binding, '/api/users'), 'localhost:4000');
  assert.equal(targetOf(binding, '/'), 'localhost:5173');
  assert.equal(routeTableOfJson('not json'), undefined);
});
