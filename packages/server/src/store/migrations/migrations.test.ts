import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { checkRequestsMigration, checkRequestTargetMigration } from './migrations.contract.js';
import { migrateTo, migrateToLatest } from './migrations.js';
import { createPagedRequestRepo } from '../requests/paged-requests-repo.js';
import type { Database } from '../schema.js';

function memoryDatabase(): { raw: BetterSqlite3.Database; db: Kysely<Database> } {
  const raw = new BetterSqlite3(':memory:');
  return { raw, db: new Kysely<Database>({ dialect: new SqliteDialect({ database: raw }) }) };
}

describe('migrations (SQLite)', () => {
  it('020 stores the target in format 2 pages; its down turns them into format 1 pages, records kept', async () => {
    const { raw, db } = memoryDatabase();
    try {
      await checkRequestTargetMigration(db, (migrated) => createPagedRequestRepo(migrated));
      assert.deepEqual(raw.prepare('select distinct format from request_pages').pluck().all(), [1]);
    } finally {
      await db.destroy();
    }
  });

  it('004 then 005 keep every inspector record, as pages; the row table is gone', async () => {
    const { raw, db } = memoryDatabase();
    try {
      await checkRequestsMigration(db, (migrated) => createPagedRequestRepo(migrated));
      const tables = raw
        .prepare("select name from sqlite_master where type = 'table' and name like 'request%' order by name")
        .pluck()
        .all();
      assert.deepEqual(tables, ['request_pages']);
    } finally {
      await db.destroy();
    }
  });

  it('005 down turns pages back into the rows of 004, ids and fields unchanged', async () => {
    const { raw, db } = memoryDatabase();
    try {
      await migrateTo(db, '004_requests_clustered');
      const row = (i: number) => ({
        id: `req_${(5000 + i).toString(16).padStart(12, '0')}${i.toString(16).padStart(16, '0')}`,
        account_id: i % 2 ? 'acc_down_a' : 'acc_down_b',
        tunnel_id: i === 3 ? null : 'tun_down',
        timestamp: 5000 + i,
        method: 'PUT',
        path: `/down/${i}`,
        status: 201,
        duration_ms: i,
        bytes: 7 * i,
        ip: '192.0.2.4',
        user_agent: 'down-agent',
        proto: 'HTTP/2.0',
        host: 'down.localhost',
      });
      // More rows than one conversion statement, so 005 makes several pages per account.
      const rows = Array.from({ length: 700 }, (_, i) => row(i));
      for (let i = 0; i < rows.length; i += 100)
        await db
          .insertInto('requests')
          .values(rows.slice(i, i + 100))
          .execute();
      await migrateTo(db, '005_request_pages');
      assert.equal(raw.prepare('select count(*) from request_pages').pluck().get(), 4, 'two pages of at most 256 rows per account');
      await migrateTo(db, '004_requests_clustered');
      const back = await db.selectFrom('requests').selectAll().orderBy('timestamp').execute();
      assert.deepEqual(back, rows);
    } finally {
      await db.destroy();
    }
  });

  it('006 adds the sign-in tables and the nullable password column, and its down removes them again', async () => {
    const { raw, db } = memoryDatabase();
    const signInTables = () =>
      raw
        .prepare("select name from sqlite_master where type = 'table' and name in ('dashboard_sessions', 'sign_in_links') order by name")
        .pluck()
        .all();
    const accountColumns = () => raw.prepare("select name from pragma_table_info('accounts')").pluck().all();
    try {
      await migrateTo(db, '005_request_pages');
      // An account as 005 left it: no password column yet.
      raw.prepare("insert into accounts (id, email, name, plan, created_at) values ('acc_old', 'old@example.com', 'Old', 'free', 1)").run();
      await migrateToLatest(db);
      assert.deepEqual(signInTables(), ['dashboard_sessions', 'sign_in_links']);
      const row = await db.selectFrom('accounts').select(['id', 'password_hash']).executeTakeFirstOrThrow();
      assert.deepEqual(row, { id: 'acc_old', password_hash: null }, 'existing accounts start without a password');
      await migrateTo(db, '005_request_pages');
      assert.deepEqual(signInTables(), []);
      assert.ok(!accountColumns().includes('password_hash'));
      assert.equal(raw.prepare('select count(*) from accounts').pluck().get(), 1);
    } finally {
      await db.destroy();
    }
  });
});
