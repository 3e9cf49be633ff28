import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasDnsLabels, isDnsLabel, isValidHostname, normalizeHostname } from './hostname.js';

test('normalizeHostname lower-cases and drops one trailing dot', () => {
  assert.equal(normalizeHostname('ABC.LocalHost.'), 'abc.localhost');
  assert.equal(normalizeHostname('abc.localhost'), 'abc.localhost');
});

test('isValidHostname accepts DNS hostnames a certificate can name', () => {
  for (const name of ['localhost', 'abc.localhost', 'xn--bcher-kva.example', 'a-b.c0.example', `${'a'.repeat(63)}.x`]) {
    assert.equal(isValidHostname(name), true, name);
  }
});

test('isValidHostname rejects IPs, bad labels and names over 253 characters', () => {
  const long = `${'a'.repeat(60)}.`.repeat(5) + 'localhost'; // 314 characters
  for (const name of [
    '',
    '127.0.0.1',
    '::1',
    'a_b.localhost',
    '-a.localhost',
    'a-.localhost',
    'a..localhost',
    '*.localhost',
    'a b',
    `${'a'.repeat(64)}.x`,
    long,
  ]) {
    assert.equal(isValidHostname(name), false, name);
  }
});

test('isDnsLabel takes one lower-case LDH label of 1 to 63 characters', () => {
  for (const label of ['a', 'a-b', 'x0', 'a'.repeat(63)]) assert.equal(isDnsLabel(label), true, label);
  for (const label of ['', 'A', '-a', 'a-', 'a_b', 'a.b', 'a'.repeat(64)]) assert.equal(isDnsLabel(label), false, label);
});

test('hasDnsLabels checks labels and the 253-character limit, not whether the name is an IP', () => {
  assert.equal(hasDnsLabels('tunnels.example.com'), true);
  assert.equal(hasDnsLabels('127.0.0.1'), true);
  const name253 = `${'a'.repeat(62)}.`.repeat(4) + 'a';
  assert.equal(hasDnsLabels(name253), true);
  assert.equal(hasDnsLabels(`${name253}b`), false);
  assert.equal(hasDnsLabels('a..b'), false);
});
