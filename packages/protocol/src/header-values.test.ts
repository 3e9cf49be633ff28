import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseHeaderAdd, trafficPolicyProblem } from './traffic-policy.js';

test('a header rule value is what HTTP can carry: printable ASCII, tabs and Latin-1, nothing past it', () => {
  assert.deepEqual(parseHeaderAdd('X-A: café\tdone'), { name: 'X-A', value: 'café\tdone' });
  // Past Latin-1: U+010D and U+010A written as Latin-1 would be CR and LF.
  assert.match(parseHeaderAdd('X-A: a\u010d\u010aX-Injected: yes') as string, /^the value of X-A: .*printable ASCII or Latin-1/);
  assert.match(parseHeaderAdd('X-B: 日本') as string, /printable ASCII or Latin-1/);
  assert.match(parseHeaderAdd('X-C: a\u0000b') as string, /no control characters/);
  assert.match(String(trafficPolicyProblem({ responseHeaderAdd: ['X-B: 日本'] })), /printable ASCII or Latin-1/);
  assert.match(
    String(trafficPolicyProblem({ rules: [{ match: { path: '/x' }, respond: { status: 200, headers: { 'X-A': '日本' } } }] })),
    /printable ASCII or Latin-1/,
  );
});
