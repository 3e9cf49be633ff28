import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accessSummary, cidrProblem, hashPassword, parseBasicAuthPair, parsePasswordHash, policyProblem } from './policy.js';

test('a user:password pair splits at the first colon and bounds the password to 8-128 characters', () => {
  assert.deepEqual(parseBasicAuthPair('alice:pass:word'), { user: 'alice', password: 'pass:word' });
  assert.equal(parseBasicAuthPair('alice'), 'expected user:password');
  assert.equal(parseBasicAuthPair(':longenough'), 'a user name is required before the colon');
  assert.match(parseBasicAuthPair('alice:short') as string, /8 to 128 characters/);
  assert.match(parseBasicAuthPair(`alice:${'x'.repeat(129)}`) as string, /8 to 128 characters/);
  // Characters, not bytes: eight emoji are eight characters.
  assert.deepEqual(parseBasicAuthPair('alice:🔑🔑🔑🔑🔑🔑🔑🔑'), { user: 'alice', password: '🔑🔑🔑🔑🔑🔑🔑🔑' });
});

test('a problem message names the user at most, never the password', () => {
  const problem = parseBasicAuthPair('alice:secret1') as string;
  assert.ok(!problem.includes('secret1'));
});

test('CIDRs and single addresses of both families pass; bad ones say why', () => {
  for (const good of ['10.0.0.0/8', '203.0.113.7', '::1', '2001:db8::/32', '0.0.0.0/0']) assert.equal(cidrProblem(good), undefined, good);
  assert.match(cidrProblem('10.0.0.0/33')!, /0 to 32/);
  assert.match(cidrProblem('2001:db8::/129')!, /0 to 128/);
  assert.match(cidrProblem('example.com')!, /not an IPv4 or IPv6/);
  assert.match(cidrProblem('10.0.0.0/x')!, /prefix length/);
});

test('a CIDR with whitespace around it is refused as such, not as a bad prefix length', () => {
  assert.equal(cidrProblem('10.0.0.0/8 '), '"10.0.0.0/8 " has whitespace around it; give the CIDR without it');
  assert.equal(cidrProblem(' 203.0.113.7'), '" 203.0.113.7" has whitespace around it; give the CIDR without it');
  assert.equal(cidrProblem('2001:db8::/32\t'), '"2001:db8::/32\\t" has whitespace around it; give the CIDR without it');
});

test('an IPv6 zone ID is refused, with or without a prefix length', () => {
  assert.equal(cidrProblem('fe80::1%eth0'), '"fe80::1%eth0": a zone ID (%eth0) has no meaning at the edge; give the address without it');
  assert.equal(cidrProblem('fe80::%en0/64'), '"fe80::%en0/64": a zone ID (%en0) has no meaning at the edge; give the address without it');
  assert.equal(cidrProblem('fe80::1'), undefined);
});

test('a hashed password round-trips through the wire format with a fresh salt each time', async () => {
  const a = await hashPassword('correct-horse');
  const b = await hashPassword('correct-horse');
  assert.notEqual(a, b);
  assert.ok(parsePasswordHash(a));
  assert.equal(policyProblem({ basicAuth: [{ user: 'alice', hash: a }] }), undefined);
});

test('the edge refuses malformed policies with key: message', () => {
  assert.equal(policyProblem(null), 'policy: expected an object');
  assert.equal(policyProblem({ headers: [] }), 'policy: unknown rule "headers"');
  assert.match(policyProblem({ basicAuth: [{ user: 'alice', hash: 'plain' }] })!, /^basicAuth: the password of "alice" is not a scrypt/);
  // Other scrypt parameters would let a bind choose the edge's cost per check.
  assert.match(
    policyProblem({ basicAuth: [{ user: 'a', hash: `scrypt$1048576$8$1$${'A'.repeat(22)}$${'B'.repeat(43)}` }] })!,
    /not a scrypt/,
  );
  assert.match(policyProblem({ cidrAllow: ['10.0.0.0/40'] })!, /^cidrAllow: /);
  assert.match(policyProblem({ cidrDeny: [] })!, /^cidrDeny: expected a non-empty list/);
  const users = Array.from({ length: 11 }, (_, i) => ({ user: `u${i}`, hash: 'x' }));
  assert.equal(policyProblem({ basicAuth: users }), 'basicAuth: at most 10 users');
});

test('the summary shows user names and CIDRs, never hashes', async () => {
  const summary = accessSummary({ basicAuth: [{ user: 'alice', hash: await hashPassword('correct-horse') }], cidrAllow: ['10.0.0.0/8'] });
  assert.deepEqual(summary, { basicAuth: ['alice'], cidrAllow: ['10.0.0.0/8'], cidrDeny: [], oidc: null, allowEmail: [], allowDomain: [] });
  const sso = accessSummary({ oidc: 'google', allowEmail: ['a@example.com'], allowDomain: ['example.org'] });
  assert.deepEqual(sso, {
    basicAuth: [],
    cidrAllow: [],
    cidrDeny: [],
    oidc: 'google',
    allowEmail: ['a@example.com'],
    allowDomain: ['example.org'],
  });
});

test('single sign-on rules: a provider name, emails and domains, only with oidc and never with basic auth', async () => {
  assert.equal(policyProblem({ oidc: 'google', allowEmail: ['a@example.com'], allowDomain: ['example.org'] }), undefined);
  assert.equal(policyProblem({ oidc: 'google' }), undefined);
  assert.match(policyProblem({ oidc: 'Google!' })!, /^oidc: expected a provider name/);
  assert.match(policyProblem({ allowEmail: ['a@example.com'] })!, /^allowEmail: needs oidc/);
  assert.match(policyProblem({ oidc: 'g', allowEmail: ['not-an-email'] })!, /^allowEmail: "not-an-email" is not an email address/);
  assert.match(policyProblem({ oidc: 'g', allowDomain: ['exa mple.com'] })!, /^allowDomain: /);
  assert.match(policyProblem({ oidc: 'g', allowDomain: [] })!, /^allowDomain: expected a non-empty list/);
  const hash = await hashPassword('correct-horse');
  assert.equal(policyProblem({ oidc: 'g', basicAuth: [{ user: 'alice', hash }] }), 'oidc: cannot be combined with basicAuth');
});
