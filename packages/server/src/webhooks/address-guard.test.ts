import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPrivateAddress, privateAddressProblem } from './address-guard.js';

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
  ])
    it(`refuses ${address}`, () => assert.equal(isPrivateAddress(address), true));

  for (const address of ['93.184.215.14', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
    it(`allows ${address}`, () => assert.equal(isPrivateAddress(address), false));
});

describe('privateAddressProblem', () => {
  it('names the private address a host name resolves to', async () => {
    assert.match((await privateAddressProblem('localhost')) ?? '', /^localhost resolves to (127\.0\.0\.1|::1)/);
  });
  it('refuses a private IP literal without a lookup', async () => {
    assert.match((await privateAddressProblem('10.9.8.7')) ?? '', /10\.9\.8\.7 is a loopback, private or link-local address/);
  });
  it('accepts a public IP literal', async () => {
    assert.equal(await privateAddressProblem('1.1.1.1'), undefined);
  });
});
