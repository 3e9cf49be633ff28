import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { burnVerification, hashPassword, passwordProblem, verifyPassword } from './password.js';

// A cheap cost keeps the suite fast; the default cost is exercised once.
const CHEAP = { N: 1024, r: 8, p: 1 };

describe('password hashing', () => {
  it('encodes scheme, parameters, salt and key; verifies the right password only', async () => {
    const encoded = await hashPassword('correct horse', CHEAP);
    assert.match(encoded, /^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    assert.equal(await verifyPassword('correct horse', encoded), true);
    assert.equal(await verifyPassword('correct horsf', encoded), false);
    assert.equal(await verifyPassword('', encoded), false);
  });

  it('salts: the same password hashes differently each time', async () => {
    const [a, b] = await Promise.all([hashPassword('same password', CHEAP), hashPassword('same password', CHEAP)]);
    assert.notEqual(a, b);
    assert.equal(await verifyPassword('same password', b), true);
  });

  it('the default cost is OWASP scrypt (N=2^15, r=8, p=3) and verifies', async () => {
    const encoded = await hashPassword('default cost password');
    assert.ok(encoded.startsWith('scrypt$32768$8$3$'));
    assert.equal(await verifyPassword('default cost password', encoded), true);
  });

  it('a malformed stored hash never verifies and never throws', async () => {
    for (const bad of ['', 'plain', 'scrypt$1024$8$1$salt', 'bcrypt$1024$8$1$c2FsdA$a2V5', 'scrypt$x$8$1$c2FsdA$a2V5']) {
      assert.equal(await verifyPassword('anything', bad), false, bad);
    }
  });

  it('burnVerification completes without a stored hash', async () => {
    await burnVerification('whatever');
  });

  it('passwordProblem: 8 to 1024 characters', () => {
    assert.equal(passwordProblem('1234567'), 'password must be at least 8 characters');
    assert.equal(passwordProblem('12345678'), undefined);
    assert.equal(passwordProblem('x'.repeat(1024)), undefined);
    assert.equal(passwordProblem('x'.repeat(1025)), 'password must be at most 1024 characters');
  });
});
