import assert from 'node:assert/strict';
import { test } from 'node:test';
import { envBasicAuthPairs } from './env-basic-auth.js';

test('SVC_BASIC_AUTH pairs are read at commas, with blanks around them dropped', () => {
  assert.deepEqual(envBasicAuthPairs('alice:correct-horse, bob:battery-staple,'), ['alice:correct-horse', 'bob:battery-staple']);
  assert.deepEqual(envBasicAuthPairs(undefined), []);
  // A colon in a password is fine: only the first one splits.
  assert.deepEqual(envBasicAuthPairs('alice:pass:word:9'), ['alice:pass:word:9']);
});

test('a comma inside a password is refused, naming the user and never the password', () => {
  const problem = envBasicAuthPairs('alice:abc-secret,def-secret,bob:battery-staple');
  assert.equal(typeof problem, 'string');
  assert.match(problem as string, /^SVC_BASIC_AUTH: the text after a comma following the password of "alice" has no colon/);
  assert.match(problem as string, /--basic-auth \(repeatable\) or basicAuth in svc\.yml$/);
  assert.doesNotMatch(problem as string, /abc|def|secret/);
});

test('a first entry without a colon is refused without printing it', () => {
  const problem = envBasicAuthPairs('hunter2-password');
  assert.match(problem as string, /^SVC_BASIC_AUTH: its first entry has no colon, so it is not a user:password pair; /);
  assert.doesNotMatch(problem as string, /hunter2/);
});
