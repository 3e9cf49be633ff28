import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hashPassword } from '@svcrouter/protocol';
import { compilePolicy } from './access-check.js';
import { MAX_CHECKS_PER_PROCESS, MAX_CHECKS_PER_TUNNEL, MAX_FAILURES, decodeBasic } from './basic-auth.js';

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

test('no rules: no check at all', () => {
  assert.equal(compilePolicy(undefined), undefined);
  assert.equal(compilePolicy({}), undefined);
});

test('deny wins over allow; with an allow list everything else is denied; IPv4-mapped and IPv6 addresses match', () => {
  const check = compilePolicy({ cidrAllow: ['127.0.0.0/30', '2001:db8::/32'], cidrDeny: ['127.0.0.2'] })!;
  assert.equal(check.check('127.0.0.1', undefined), undefined);
  assert.equal(check.check('::ffff:127.0.0.1', undefined), undefined);
  assert.equal(check.check('127.0.0.2', undefined), 403);
  assert.equal(check.check('127.0.0.5', undefined), 403);
  assert.equal(check.check('2001:db8::7', undefined), undefined);
  assert.equal(check.check('::1', undefined), 403);
  // Asked twice: the remembered verdict is the same.
  assert.equal(check.check('127.0.0.2', undefined), 403);
  const denyOnly = compilePolicy({ cidrDeny: ['::1'] })!;
  assert.equal(denyOnly.check('::1', undefined), 403);
  assert.equal(denyOnly.check('127.0.0.1', undefined), undefined);
  assert.equal(denyOnly.consumesAuthorization, false);
});

test('basic auth: right credentials pass (remembered after the first check), wrong ones and none get 401', async () => {
  const check = compilePolicy({ basicAuth: [{ user: 'alice', hash: await hashPassword('correct-horse') }] })!;
  assert.equal(check.consumesAuthorization, true);
  assert.equal(check.check('10.0.0.1', undefined), 401);
  assert.equal(await check.check('10.0.0.1', basic('alice', 'correct-horse')), undefined);
  // The second time it is answered at once, from the digest.
  assert.equal(check.check('10.0.0.1', basic('alice', 'correct-horse')), undefined);
  assert.equal(await check.check('10.0.0.1', basic('alice', 'wrong-horse')), 401);
  assert.equal(await check.check('10.0.0.1', basic('mallory', 'correct-horse')), 401);
});

test(`an address with ${MAX_FAILURES} failures in a minute gets 429, other addresses do not`, async () => {
  const check = compilePolicy({ basicAuth: [{ user: 'alice', hash: await hashPassword('correct-horse') }] })!;
  for (let i = 0; i < MAX_FAILURES; i++) assert.equal(await check.check('10.0.0.2', basic('alice', 'wrong')), 401);
  assert.equal(await check.check('10.0.0.2', basic('alice', 'correct-horse')), 429);
  assert.equal(await check.check('10.0.0.3', basic('alice', 'correct-horse')), undefined);
});

test('guesses sent in parallel count before their verdicts: an address never has more than its failures left checked', async () => {
  const check = compilePolicy({ basicAuth: [{ user: 'alice', hash: await hashPassword('correct-horse') }] })!;
  const before = 5;
  for (let i = 0; i < before; i++) assert.equal(await check.check('10.0.0.4', basic('alice', `wrong-${i}`)), 401);
  const parallel = MAX_CHECKS_PER_TUNNEL;
  const answers = await Promise.all(
    Array.from({ length: parallel }, (_, i) => Promise.resolve(check.check('10.0.0.4', basic('alice', `guess-${i}`)))),
  );
  assert.deepEqual(answers, [...Array(MAX_FAILURES - before).fill(401), ...Array(parallel - (MAX_FAILURES - before)).fill(429)]);
  // Their failures are counted now: the address is blocked, even with the right password.
  assert.equal(await check.check('10.0.0.4', basic('alice', 'correct-horse')), 429);
});

test('new credentials past the checks a tunnel runs at once get 503 at once, and a tunnel under a flood leaves the others alone', async () => {
  const users = [{ user: 'alice', hash: await hashPassword('correct-horse') }];
  const flooded = compilePolicy({ basicAuth: users })!;
  const extra = 4;
  const flood = Array.from({ length: MAX_CHECKS_PER_TUNNEL + extra }, (_, i) => flooded.check(`10.1.0.${i}`, basic('alice', `guess-${i}`)));
  assert.deepEqual(
    flood.slice(MAX_CHECKS_PER_TUNNEL).map((answer) => (typeof answer === 'number' ? answer : 'checking')),
    Array(extra).fill(503),
  );
  const other = compilePolicy({ basicAuth: users })!;
  assert.equal(await other.check('10.2.0.1', basic('alice', 'correct-horse')), undefined);
  assert.deepEqual(
    await Promise.all(flood.slice(0, MAX_CHECKS_PER_TUNNEL).map((answer) => Promise.resolve(answer))),
    Array(MAX_CHECKS_PER_TUNNEL).fill(401),
  );
  // Once the checks are over the flooded tunnel takes new credentials again.
  assert.equal(await flooded.check('10.2.0.2', basic('alice', 'correct-horse')), undefined);
});

test('the process runs a bounded number of checks at once across its tunnels', async () => {
  const users = [{ user: 'alice', hash: await hashPassword('correct-horse') }];
  const tunnels = Array.from({ length: MAX_CHECKS_PER_PROCESS / MAX_CHECKS_PER_TUNNEL }, () => compilePolicy({ basicAuth: users })!);
  const running = tunnels.flatMap((tunnel, t) =>
    Array.from({ length: MAX_CHECKS_PER_TUNNEL }, (_, i) => tunnel.check(`10.3.${t}.${i}`, basic('alice', `guess-${i}`))),
  );
  const late = compilePolicy({ basicAuth: users })!;
  assert.equal(late.check('10.4.0.1', basic('alice', 'correct-horse')), 503);
  assert.ok((await Promise.all(running.map((answer) => Promise.resolve(answer)))).every((answer) => answer === 401));
  assert.equal(await late.check('10.4.0.1', basic('alice', 'correct-horse')), undefined);
});

test('Basic headers that are not user:password decode to nothing', () => {
  assert.deepEqual(decodeBasic(basic('alice', 'a:b')), { user: 'alice', password: Buffer.from('a:b') });
  assert.equal(decodeBasic(`Basic ${Buffer.from('nocolon').toString('base64')}`), undefined);
  assert.equal(decodeBasic('Basic @@@@'), undefined);
  assert.equal(decodeBasic('Basic abc'), undefined);
  assert.equal(decodeBasic('Bearer abc='), undefined);
  assert.equal(decodeBasic(`Basic ${Buffer.from([0xff, 0x3a, 0x41]).toString('base64')}`), undefined);
});
