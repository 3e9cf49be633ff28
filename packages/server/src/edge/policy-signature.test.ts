import assert from 'node:assert/strict';
import { test } from 'node:test';
import { policySignature } from './policy-signature.js';

test("two members agree when only their password hashes and their keys' order differ", () => {
  const a = policySignature({
    basicAuth: [{ user: 'alice', hash: 'scrypt$1' }],
    cidrAllow: ['10.0.0.0/8'],
    rateLimit: { count: 5, windowMs: 1000 },
  });
  const b = policySignature({
    rateLimit: { windowMs: 1000, count: 5 },
    cidrAllow: ['10.0.0.0/8'],
    basicAuth: [{ user: 'alice', hash: 'scrypt$2' }],
  });
  assert.equal(a, b);
  assert.notEqual(
    a,
    policySignature({ basicAuth: [{ user: 'bob', hash: 'scrypt$1' }], cidrAllow: ['10.0.0.0/8'], rateLimit: { count: 5, windowMs: 1000 } }),
  );
  assert.notEqual(policySignature({ responseHeaderAdd: ['X-A: b'] }), policySignature(undefined));
  assert.equal(policySignature(undefined), '');
});
