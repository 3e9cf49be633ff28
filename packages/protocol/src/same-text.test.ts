import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sameText } from './same-text.js';

test('sameText: equal texts match, any difference does not', () => {
  assert.equal(sameText('sha256=abc', 'sha256=abc'), true);
  assert.equal(sameText('', ''), true);
  assert.equal(sameText('sha256=abd', 'sha256=abc'), false);
  assert.equal(sameText('sha256=ab', 'sha256=abc'), false);
  assert.equal(sameText('sha256=abcd', 'sha256=abc'), false);
  assert.equal(sameText('', 'x'), false);
});

test('sameText: compares the UTF-8 bytes, so texts of equal length in characters but not in bytes differ', () => {
  assert.equal(sameText('é', 'e'), false);
  assert.equal(sameText('ée', 'éé'), false);
  assert.equal(sameText('é', 'é'), true);
});
