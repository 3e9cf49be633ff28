import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { checkRequestsMigration } from './migrations.contract.js';
import type { Database } from './schema.js';

describe('migrations (SQLite)', () => {
  it('004 keeps every inspector record, clustered by account and time in a WITHOUT ROWID table', async () => {
    const raw = new BetterSqlite3(':memory:');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: raw }) });
    try {
      await checkRequestsMigration(db);
      const ddl = raw.prepare("select sql from sqlite_master where name = 'requests'").pluck().get() as string;
      assert.match(ddl, /primary key \("account_id", "timestamp", "id"\)\)\s*without rowid/i);
      const indexes = raw.prepare("select name from sqlite_master where type = 'index' and tbl_name = 'requests' and sql is not null").pluck().all();
      assert.deepEqual(indexes, [], 'the old secondary indexes are gone');
    } finally {
      await db.destroy();
    }
  });
});
