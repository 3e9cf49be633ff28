import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { StatementCachingDatabase } from './sqlite-statement-cache.js';

const tempDirs: string[] = [];
after(async () => {
  await Promise.all(tempDirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** A fresh WAL database file with table t(k primary key, v). */
async function freshFile(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-stmt-cache-'));
  tempDirs.push(dir);
  const file = join(dir, 'cache.sqlite');
  const raw = new BetterSqlite3(file);
  raw.pragma('journal_mode = WAL');
  raw.exec('create table t (k integer primary key, v text not null)');
  raw.close();
  return file;
}

async function open(capacity?: number): Promise<{ file: string; raw: BetterSqlite3.Database; db: StatementCachingDatabase }> {
  const file = await freshFile();
  const raw = new BetterSqlite3(file);
  return { file, raw, db: new StatementCachingDatabase(raw, capacity) };
}

const SELECT_ALL = 'select k, v from t order by k';
const INSERT = 'insert into t (k, v) values (?, ?)';

describe('StatementCachingDatabase', () => {
  it('returns the same statement for the same SQL and a different one for other SQL', async () => {
    const { db } = await open();
    try {
      const first = db.prepare(SELECT_ALL);
      assert.equal(db.prepare(SELECT_ALL), first);
      assert.notEqual(db.prepare(INSERT), first);
      assert.equal(db.size, 2);
    } finally {
      db.close();
    }
  });

  it('keeps at most `capacity` statements, evicting the least recently used', async () => {
    const { db } = await open(2);
    try {
      const a = db.prepare('select 1');
      const b = db.prepare('select 2');
      assert.equal(db.prepare('select 1'), a, 'a is now the most recent');
      db.prepare('select 3');
      assert.equal(db.size, 2);
      assert.equal(db.prepare('select 1'), a, 'a was kept');
      assert.notEqual(db.prepare('select 2'), b, 'b was evicted and is prepared anew');
      assert.equal(db.size, 2);
    } finally {
      db.close();
    }
  });

  it('an evicted statement still works, and so does its re-prepared successor', async () => {
    const { db } = await open(1);
    try {
      const evicted = db.prepare(INSERT);
      db.prepare(SELECT_ALL);
      evicted.run([1, 'one']);
      const successor = db.prepare(INSERT);
      assert.notEqual(successor, evicted);
      successor.run([2, 'two']);
      assert.deepEqual(db.prepare(SELECT_ALL).all([]), [
        { k: 1, v: 'one' },
        { k: 2, v: 'two' },
      ]);
    } finally {
      db.close();
    }
  });

  it('does not hand out a statement whose iterator is still open', async () => {
    const { raw, db } = await open();
    try {
      raw.exec("insert into t (k, v) values (1, 'one'), (2, 'two')");
      const cached = db.prepare(SELECT_ALL);
      const iterator = cached.iterate([]);
      assert.deepEqual(iterator.next().value, { k: 1, v: 'one' });
      const other = db.prepare(SELECT_ALL);
      assert.notEqual(other, cached);
      assert.equal(other.all([]).length, 2);
      iterator.return?.();
      assert.equal(db.prepare(SELECT_ALL), cached, 'cached again once the iterator ended');
    } finally {
      db.close();
    }
  });

  it('a cached statement holds no snapshot: it sees later writes of another connection', async () => {
    const { file, db } = await open();
    const other = new BetterSqlite3(file);
    try {
      assert.deepEqual(db.prepare(SELECT_ALL).all([]), []);
      other.prepare(INSERT).run(1, 'from other');
      assert.deepEqual(db.prepare(SELECT_ALL).all([]), [{ k: 1, v: 'from other' }]);
    } finally {
      other.close();
      db.close();
    }
  });

  it('a cached statement still works after it failed', async () => {
    const { db } = await open();
    try {
      db.prepare(INSERT).run([1, 'one']);
      assert.throws(() => db.prepare(INSERT).run([1, 'duplicate']), /UNIQUE/);
      db.prepare(INSERT).run([2, 'two']);
      assert.equal(db.prepare(SELECT_ALL).all([]).length, 2);
    } finally {
      db.close();
    }
  });

  it('SQL that fails to prepare throws and is not cached', async () => {
    const { db } = await open();
    try {
      assert.throws(() => db.prepare('select * from missing_table'), /no such table/);
      assert.equal(db.size, 0);
    } finally {
      db.close();
    }
  });

  it('rejects a capacity below one', async () => {
    const { raw } = await open();
    try {
      assert.throws(() => new StatementCachingDatabase(raw, 0), RangeError);
    } finally {
      raw.close();
    }
  });
});

describe('StatementCachingDatabase under Kysely', () => {
  it('serves repeated queries from the cache', async () => {
    const { db } = await open();
    const kysely = new Kysely<{ t: { k: number; v: string } }>({ dialect: new SqliteDialect({ database: db }) });
    try {
      await kysely.insertInto('t').values({ k: 1, v: 'one' }).execute();
      await kysely.insertInto('t').values({ k: 2, v: 'two' }).execute();
      const size = db.size;
      for (let i = 0; i < 3; i++) assert.equal((await kysely.selectFrom('t').selectAll().where('k', '=', 2).execute())[0]?.v, 'two');
      assert.equal(db.size, size + 1, 'one statement for the three selects');
    } finally {
      await kysely.destroy();
    }
  });
});
