import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { SQLITE_FILE } from '../store/open-store.js';
import { isStoreUnavailable } from '../store/index.js';
import { startApiFixture, type ApiFixture } from './test-support.js';

// A store passing through a fault answers 503 with Retry-After, not 500: first the mapping of
// driver errors, then a real SQLite file locked by another writer.

describe('isStoreUnavailable', () => {
  const coded = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code });
  const transient: Array<[string, Error]> = [
    ['SQLite busy past the busy timeout', coded('SQLITE_BUSY', 'database is locked')],
    ['an extended SQLite busy code', coded('SQLITE_BUSY_SNAPSHOT')],
    ['SQLite out of disk', coded('SQLITE_FULL', 'database or disk is full')],
    ['an SQLite I/O error', coded('SQLITE_IOERR_WRITE')],
    ['PostgreSQL shutting down (57P01)', coded('57P01', 'terminating connection due to administrator command')],
    ['PostgreSQL starting up (57P03)', coded('57P03', 'the database system is starting up')],
    ['PostgreSQL refusing connections', coded('ECONNREFUSED')],
    ['a connection dropped mid-query (no code)', new Error('Connection terminated unexpectedly')],
    ['a wrapped cause', new Error('store failed', { cause: coded('SQLITE_BUSY') })],
  ];
  for (const [name, error] of transient) it(`is true for ${name}`, () => assert.equal(isStoreUnavailable(error), true));

  const permanent: Array<[string, unknown]> = [
    ['a constraint violation', coded('SQLITE_CONSTRAINT_UNIQUE')],
    ['a PostgreSQL syntax error', coded('42601')],
    ['a plain Error', new Error('database exploded')],
    ['a thrown string', 'SQLITE_BUSY'],
  ];
  for (const [name, error] of permanent) it(`is false for ${name}`, () => assert.equal(isStoreUnavailable(error), false));
});

describe('the API over an SQLite file locked by another writer', () => {
  let api: ApiFixture;
  let other: BetterSqlite3.Database;
  before(async () => {
    api = await startApiFixture();
    other = new BetterSqlite3(path.join(api.dataDir, SQLITE_FILE));
  });
  after(async () => {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await api.close();
  });

  it('answers a write 503 with Retry-After while the lock is held, 201 once it is released, and the file stays intact', async () => {
    other.exec('BEGIN IMMEDIATE');
    const locked = await api.call('POST', '/v1/keys', { body: { description: 'during the lock' } });
    assert.equal(locked.status, 503, locked.text);
    assert.equal(locked.headers.get('retry-after'), '5');
    assert.deepEqual(locked.body, { error: 'unavailable', message: 'the store is busy or restarting; retry shortly' });
    // Reads go on under a writer's lock (WAL).
    assert.equal((await api.call('GET', '/v1/keys')).status, 200);
    other.exec('ROLLBACK');
    const after = await api.call('POST', '/v1/keys', { body: { description: 'after the lock' } });
    assert.equal(after.status, 201, after.text);
    assert.equal(other.pragma('integrity_check', { simple: true }), 'ok');
    assert.ok(api.logLines.some((line) => line.includes('store unavailable; answered 503')));
    assert.ok(!api.logLines.some((line) => line.includes('api handler failed')));
  });

  it('waits for the lock on timers: reads answer while a write waits, and the write lands once the lock goes', async () => {
    other.exec('BEGIN IMMEDIATE');
    let settled = false;
    const waiting = api.call('POST', '/v1/keys', { body: { description: 'waits for the lock' } }).finally(() => (settled = true));
    // Answered while the write is still waiting: the process is not stuck inside SQLite.
    for (let i = 0; i < 3; i++) assert.equal((await api.call('GET', '/v1/keys')).status, 200);
    assert.equal(settled, false);
    other.exec('ROLLBACK');
    const written = await waiting;
    assert.equal(written.status, 201, written.text);
    assert.equal(other.pragma('integrity_check', { simple: true }), 'ok');
  });
});
