import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { once } from 'node:events';
import net from 'node:net';
import { describe, it } from 'node:test';
import { TARGET_LOOKUP_TTL_MS, TargetLookup, type Resolve } from './target-lookup.js';

/** A resolver that counts its calls and answers what it is told to, at once (as a cache hit would not). */
function fakeResolver(answers: Array<LookupAddress[] | NodeJS.ErrnoException>): { resolve: Resolve; calls: string[] } {
  const calls: string[] = [];
  const resolve: Resolve = (hostname, options, callback) => {
    calls.push(`${hostname} family=${String(options.family)} hints=${String(options.hints)} all=${String(options.all)}`);
    const next = answers.shift()!;
    setImmediate(() => (next instanceof Error ? callback(next, []) : callback(null, next)));
  };
  return { resolve, calls };
}

const V4: LookupAddress[] = [{ address: '127.0.0.1', family: 4 }];
const BOTH: LookupAddress[] = [
  { address: '::1', family: 6 },
  { address: '127.0.0.1', family: 4 },
];

function ask(lookup: TargetLookup, options: { family?: number; hints?: number; all?: boolean }): Promise<unknown[]> {
  return new Promise((resolve) => {
    let returned = false;
    lookup.lookup('localhost', options, (...args) => {
      assert.ok(returned, 'answered before lookup() returned');
      resolve(args);
    });
    returned = true;
  });
}

describe('TargetLookup', () => {
  it('serves the connections within the TTL from one lookup, and looks the name up again after it', async () => {
    let now = 0;
    const { resolve, calls } = fakeResolver([V4, V4]);
    const lookup = new TargetLookup(resolve, () => now);
    assert.deepEqual(await ask(lookup, { hints: 1024, all: true }), [null, V4]);
    now = TARGET_LOOKUP_TTL_MS - 1;
    assert.deepEqual(await ask(lookup, { hints: 1024, all: true }), [null, V4]);
    assert.equal(calls.length, 1);
    now = TARGET_LOOKUP_TTL_MS;
    await ask(lookup, { hints: 1024, all: true });
    assert.deepEqual(calls, ['localhost family=undefined hints=1024 all=true', 'localhost family=undefined hints=1024 all=true']);
  });

  it('answers without `all` as dns.lookup does: the first address and its family', async () => {
    const { resolve } = fakeResolver([BOTH]);
    const lookup = new TargetLookup(resolve, () => 0);
    assert.deepEqual(await ask(lookup, { all: true }), [null, BOTH]);
    assert.deepEqual(await ask(lookup, {}), [null, '::1', 6]);
  });

  it('keeps no failed lookup, and looks again after forget()', async () => {
    const failure = Object.assign(new Error('getaddrinfo ENOTFOUND localhost'), { code: 'ENOTFOUND' });
    const { resolve, calls } = fakeResolver([failure, V4, BOTH]);
    const lookup = new TargetLookup(resolve, () => 0);
    const [error] = await ask(lookup, { all: true });
    assert.equal((error as NodeJS.ErrnoException).code, 'ENOTFOUND');
    assert.deepEqual(await ask(lookup, { all: true }), [null, V4]);
    lookup.forget();
    assert.deepEqual(await ask(lookup, { all: true }), [null, BOTH]);
    assert.equal(calls.length, 3);
  });

  it('shares nothing between lookups asked with other options', async () => {
    const { resolve, calls } = fakeResolver([BOTH, V4]);
    const lookup = new TargetLookup(resolve, () => 0);
    await ask(lookup, { hints: 1024, all: true });
    assert.deepEqual(await ask(lookup, { family: 4, hints: 0 }), [null, '127.0.0.1', 4]);
    assert.equal(calls.length, 2);
  });

  it('connects net.connect to a service on localhost, the second connection without a lookup of its own', async () => {
    const server = net.createServer((socket) => socket.end('x'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as net.AddressInfo).port;
    let resolves = 0;
    const real = new TargetLookup();
    const counted = new TargetLookup((hostname, options, callback) => {
      resolves++;
      real.lookup(hostname, options, callback as Parameters<TargetLookup['lookup']>[2]);
    });
    try {
      for (let i = 0; i < 2; i++) {
        const socket = net.connect({ host: 'localhost', port, lookup: counted.lookup });
        const [chunk] = (await once(socket, 'data')) as [Buffer];
        assert.equal(chunk.toString(), 'x');
        socket.destroy();
      }
      assert.equal(resolves, 1);
    } finally {
      server.close();
    }
  });
});
