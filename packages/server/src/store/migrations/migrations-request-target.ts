import { SqliteAdapter, type Kysely } from 'kysely';
import type { NamedMigration } from './named-migration.js';

// Which local target served a request (routes: one hostname, several local services by path).
// Same rules as migrations.ts: never edit a shipped migration.

// Kysely<any>: migrations must not depend on today's schema types.
/* eslint-disable @typescript-eslint/no-explicit-any */
export const REQUEST_TARGET_MIGRATIONS: readonly NamedMigration[] = [
  {
    // `target`: the `host:port` of the local service that served a request of a tunnel with
    // routes; null otherwise. PostgreSQL's `requests` gains the column. SQLite keeps records in
    // pages (migration 005), whose layout says its own format: pages of format 2 carry the target
    // as their last column, and pages of format 1 are still read, as records without one, so no
    // page is rewritten on the way up. Down turns format 2 pages back into format 1.
    name: '020_request_target',
    async up(db: Kysely<any>) {
      if (isSqlite(db)) return;
      await db.schema.alterTable('requests').addColumn('target', 'text').execute();
    },
    async down(db: Kysely<any>) {
      if (!isSqlite(db)) {
        await db.schema.alterTable('requests').dropColumn('target').execute();
        return;
      }
      let after = 0;
      for (;;) {
        const page = await db
          .selectFrom('request_pages')
          .select(['page_id', 'record_count', 'vals'])
          .where('page_id', '>', after)
          .where('format', '=', 2)
          .orderBy('page_id')
          .limit(1)
          .executeTakeFirst();
        if (!page) return;
        await db
          .updateTable('request_pages')
          .set({ format: 1, vals: withoutLastColumn(page.vals as Uint8Array, page.record_count as number) })
          .where('page_id', '=', page.page_id)
          .execute();
        after = page.page_id as number;
      }
    },
  },
];

/** A page's values (float64 per column, little-endian, record after record) with each record's last column dropped. */
function withoutLastColumn(vals: Uint8Array, count: number): Buffer {
  const bytes = Buffer.from(vals);
  const width = bytes.length / 8 / count;
  const out = Buffer.alloc(count * (width - 1) * 8);
  for (let row = 0; row < count; row++) bytes.copy(out, row * (width - 1) * 8, row * width * 8, (row * width + width - 1) * 8);
  return out;
}

function isSqlite(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof SqliteAdapter;
}
