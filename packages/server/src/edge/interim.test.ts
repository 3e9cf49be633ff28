import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expectsContinue } from './interim.js';

test('recognises Expect: 100-continue in any case and among other expectations', () => {
  assert.equal(expectsContinue({ headers: { expect: '100-continue' } }), true);
  assert.equal(expectsContinue({ headers: { expect: '100-Continue' } }), true);
  assert.equal(expectsContinue({ headers: { expect: 'foo, 100-continue' } }), true);
  assert.equal(expectsContinue({ headers: { expect: '100-continued' } }), false);
  assert.equal(expectsContinue({ headers: {} }), false);
});
