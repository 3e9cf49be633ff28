import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeRulePath } from './rule-path.js';

test('a path with nothing to normalise comes back as the same string', () => {
  for (const path of ['/', '/admin/secret.txt', '/a-b_c~d/e.f', '/api/v2;x=1']) assert.equal(normalizeRulePath(path), path);
});

test('escapes of unreserved characters are decoded, the others upper-cased', () => {
  assert.equal(normalizeRulePath('/%61dmin/%7Euser'), '/admin/~user');
  assert.equal(normalizeRulePath('/a%2fb%3f%20c'), '/a%2Fb%3F%20c');
  assert.equal(normalizeRulePath('/100%/%zz/%4'), '/100%/%zz/%4');
  assert.equal(normalizeRulePath('/%41%2D%2e%5F%7e'), '/A-._~');
});

test('runs of slashes merge and dot segments resolve, never above the root', () => {
  const cases: [string, string][] = [
    ['//admin/secret.txt', '/admin/secret.txt'],
    ['/./admin/secret.txt', '/admin/secret.txt'],
    ['/x/../admin/secret.txt', '/admin/secret.txt'],
    ['/x/y/../../admin', '/admin'],
    ['/../../admin', '/admin'],
    ['/%2e%2e/%2E/admin', '/admin'],
    ['/a/b/..', '/a/'],
    ['/a/.', '/a/'],
    ['/a//', '/a/'],
    ['/..', '/'],
    ['/.well-known/x', '/.well-known/x'],
    ['/a/..b/.c', '/a/..b/.c'],
  ];
  for (const [path, expected] of cases) assert.equal(normalizeRulePath(path), expected, path);
});
