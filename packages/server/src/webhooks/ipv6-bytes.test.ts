import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ipv6Bytes } from './ipv6-bytes.js';

const hex = (address: string): string | undefined => {
  const bytes = ipv6Bytes(address);
  return bytes && Buffer.from(bytes).toString('hex');
};

describe('ipv6Bytes', () => {
  for (const [address, expected] of [
    ['::', '00000000000000000000000000000000'],
    ['::1', '00000000000000000000000000000001'],
    ['1::', '00010000000000000000000000000000'],
    ['1:2:3:4:5:6:7:8', '00010002000300040005000600070008'],
    ['64:ff9b::7f00:1', '0064ff9b00000000000000007f000001'],
    ['64:FF9B::127.0.0.1', '0064ff9b00000000000000007f000001'],
    ['::ffff:10.0.0.1', '00000000000000000000ffff0a000001'],
    ['1:2:3:4:5:6:1.2.3.4', '00010002000300040005000601020304'],
    ['2002:7f00:1::', '20027f00000100000000000000000000'],
    ['fe80::1%eth0', 'fe800000000000000000000000000001'],
  ] as const)
    it(`reads ${address}`, () => assert.equal(hex(address), expected));

  for (const address of ['127.0.0.1', '1::2::3', '::1.2.3', '::ffff:256.1.1.1', 'example.com', ''])
    it(`returns undefined for ${JSON.stringify(address)}`, () => assert.equal(ipv6Bytes(address), undefined));
});
