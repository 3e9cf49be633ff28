import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LookupAddress } from 'node:dns';
import { guardedLookup, isPrivateAddress, privateAddressProblem } from './address-guard.js';

describe('isPrivateAddress', () => {
  for (const address of [
    '127.0.0.1',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b::10.0.0.1',
    'not an address',
    // IPv4-mapped, both spellings, with and without elision.
    '::ffff:a00:1',
    '0:0:0:0:0:ffff:7f00:1',
    '::FFFF:169.254.169.254',
    // NAT64 well-known prefix, hex as `new URL` and DNS64 print it, and dotted.
    '64:ff9b::7f00:1',
    '64:ff9b::a00:1',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::127.0.0.1',
    '64:ff9b:0:0:0:0:c0a8:101',
    // Local-use NAT64 translates into the operator's network, whatever it embeds.
    '64:ff9b:1::808:808',
    '64:ff9b:1:abcd::1.1.1.1',
    // IPv4-compatible (::/96) is refused outright, public IPv4 inside or not.
    '::7f00:1',
    '::127.0.0.1',
    '::808:808',
    '::8.8.8.8',
    // 6to4 reaches the IPv4 in bytes 2 to 5.
    '2002:7f00:1::',
    '2002:a00:1::1',
    '2002:c0a8:101:1::1',
    '2002::',
    // A zone ID scopes the address to a link of this machine.
    '2606:4700:4700::1111%eth0',
  ])
    it(`refuses ${address}`, () => assert.equal(isPrivateAddress(address), true));

  for (const address of [
    '93.184.215.14',
    '1.1.1.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '64:ff9b::808:808',
    '64:ff9b::8.8.8.8',
    '2002:808:808::1',
  ])
    it(`allows ${address}`, () => assert.equal(isPrivateAddress(address), false));
});

describe('privateAddressProblem', () => {
  it('names the private address a host name resolves to', async () => {
    const problem = await privateAddressProblem('localhost');
    assert.equal(problem?.kind, 'private');
    assert.match(problem?.reason ?? '', /^localhost resolves to (127\.0\.0\.1|::1), a loopback, private or link-local address$/);
  });
  it('refuses a private IP literal without a lookup', async () => {
    assert.deepEqual(await privateAddressProblem('10.9.8.7'), {
      kind: 'private',
      reason: '10.9.8.7 is a loopback, private or link-local address',
    });
  });
  it('refuses an IPv6 literal by the private IPv4 it carries', async () => {
    assert.equal((await privateAddressProblem('64:ff9b::a00:1'))?.kind, 'private');
  });
  it('accepts a public IP literal', async () => {
    assert.equal(await privateAddressProblem('1.1.1.1'), undefined);
  });
  it('tells a name that does not resolve apart from a private one, naming the host', async () => {
    // .invalid is reserved never to resolve.
    const problem = await privateAddressProblem('no-such-receiver.invalid');
    assert.equal(problem?.kind, 'unresolvable');
    assert.match(problem?.reason ?? '', /^no-such-receiver\.invalid (does not resolve|could not be resolved \(\w+\); try again)$/);
  });
});

describe('guardedLookup', () => {
  // A resolver hands back an address in whatever spelling; a literal looks itself up, so it stands in for one.
  const resolve = (host: string): Promise<{ err: NodeJS.ErrnoException | null; list?: LookupAddress[] }> =>
    new Promise((done) => guardedLookup(host, { all: true }, (err, list) => done({ err, list: list as unknown as LookupAddress[] })));

  for (const host of ['64:ff9b::7f00:1', '64:ff9b::a00:1', '::7f00:1', '2002:a9fe:a9fe::1'])
    it(`fails the connect to ${host}`, async () => {
      const { err } = await resolve(host);
      assert.equal(err?.message, `refused: ${host} resolves to ${host}, a private address`);
      assert.equal(err?.code, 'WEBHOOK_PRIVATE_ADDRESS');
    });

  it('passes a public NAT64 address through', async () => {
    const { err, list } = await resolve('64:ff9b::808:808');
    assert.equal(err, null);
    assert.deepEqual(list, [{ address: '64:ff9b::808:808', family: 6 }]);
  });
});
