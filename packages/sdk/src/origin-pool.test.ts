import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { afterEach, describe, it } from 'node:test';
import { OriginPool, originAddress, type ConnectionUser, type OriginConnection } from './origin-pool.js';
import { parseLocalTarget, type LocalTarget } from './local-target.js';
import { tcpOrigin, type TestOrigin } from './origin-test-support.js';

// The pool on its own: which idle connection it hands out, and when it lets one go.

const quietUser: ConnectionUser = {
  onOriginData() {},
  onOriginEnd() {},
  onOriginClose() {},
  onOriginDrain() {},
};

describe('OriginPool', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  const accepted = new EventEmitter();

  async function setup(): Promise<{ origin: TestOrigin; pool: OriginPool }> {
    const origin = await tcpOrigin((socket) => accepted.emit('socket', socket));
    cleanups.push(() => origin.close());
    const pool = new OriginPool(originAddress(parseLocalTarget(origin.url) as LocalTarget));
    cleanups.push(() => pool.close());
    return { origin, pool };
  }

  /** A new connection, once both ends have it. */
  async function connected(pool: OriginPool): Promise<OriginConnection> {
    const serverSide = once(accepted, 'socket');
    const connection = pool.acquire(quietUser);
    await Promise.all([once(connection.socket, 'connect'), serverSide]);
    return connection;
  }

  it('reads host, port and TLS from the local target, IPv6 literals unbracketed', () => {
    const address = (origin: string) => originAddress(parseLocalTarget(origin) as LocalTarget);
    assert.deepEqual(address('3000'), { host: 'localhost', port: 3000, tls: false });
    assert.deepEqual(address('https://[::1]'), { host: '::1', port: 443, tls: true });
    assert.deepEqual(address('http://example.test'), { host: 'example.test', port: 80, tls: false });
  });

  it('hands out the most recently released connection first', async () => {
    const { pool } = await setup();
    const [first, second] = [await connected(pool), await connected(pool)];
    pool.release(first);
    pool.release(second);
    assert.equal(pool.acquire(quietUser), second);
    assert.equal(pool.acquire(quietUser), first);
    assert.equal(pool.size, 2);
  });

  it('forgets an idle connection the origin closed', async () => {
    const { origin, pool } = await setup();
    const connection = await connected(pool);
    pool.release(connection);
    assert.equal(pool.idleCount, 1);
    origin.connections[0]!.end();
    await once(connection.socket, 'close');
    assert.equal(pool.idleCount, 0);
    assert.equal(pool.size, 0);
    assert.notEqual(pool.acquire(quietUser), connection);
  });

  it('closes an idle connection that receives bytes nobody asked for', async () => {
    const { origin, pool } = await setup();
    const connection = await connected(pool);
    pool.release(connection);
    origin.connections[0]!.write('HTTP/1.1 200 OK\r\n\r\n');
    await once(connection.socket, 'close');
    assert.equal(pool.idleCount, 0);
  });

  it('tells the user of a busy connection that it closed', async () => {
    const origin = await tcpOrigin((socket) => socket.destroy());
    cleanups.push(() => origin.close());
    const pool = new OriginPool({ host: '127.0.0.1', port: origin.port, tls: false });
    cleanups.push(() => pool.close());
    let closed!: () => void;
    const told = new Promise<void>((resolve) => (closed = resolve));
    pool.acquire({ ...quietUser, onOriginClose: () => closed() });
    await told;
    assert.equal(pool.size, 0);
  });

  it('destroys busy and idle connections on close()', async () => {
    const { pool } = await setup();
    const [busy, idle] = [await connected(pool), await connected(pool)];
    pool.release(idle);
    pool.close();
    await Promise.all([once(busy.socket, 'close'), once(idle.socket, 'close')]);
    assert.equal(pool.size, 0);
  });
});
