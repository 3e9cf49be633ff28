import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import { migrateTo, migrateToLatest } from './migrations.js';
import type { RequestRepo } from '../requests/request-records.js';
import type { Database } from '../schema.js';

/**
 * Migration 004 rebuilds `requests` with another key, and on SQLite 005 turns its rows into
 * pages: records written under 003's layout must all come through, readable and prunable as
 * before through the engine's repo (`repoFor`). `db` is an empty database (or schema).
 */
export async function checkRequestsMigration(
  db: Kysely<Database>,
  repoFor: (db: Kysely<Database>) => RequestRepo,
  schema?: string,
): Promise<void> {
  await migrateTo(db, '003_domains_and_certificates', schema);
  const old = Array.from({ length: 5 }, (_, i) => ({
    id: `req_${(1000 + i).toString(16).padStart(12, '0')}${'0'.repeat(15)}${i}`,
    account_id: i < 3 ? 'acc_migrated_a' : 'acc_migrated_b',
    tunnel_id: i === 0 ? null : 'tun_migrated',
    timestamp: 1000 + i,
    method: 'GET',
    path: `/old/${i}`,
    status: 200 + i,
    duration_ms: i,
    bytes: 10 * i,
    ip: '198.51.100.7',
    user_agent: 'old-agent',
    proto: 'HTTP/1.1',
    host: 'old.localhost',
  }));
  await db.insertInto('requests').values(old).execute();

  await migrateToLatest(db, schema);
  const repo = repoFor(db);
  const a = await repo.list('acc_migrated_a', { limit: 10 });
  assert.deepEqual(
    a.map((r) => r.path),
    ['/old/2', '/old/1', '/old/0'],
  );
  assert.deepEqual(a[2], {
    id: old[0]!.id,
    accountId: 'acc_migrated_a',
    tunnelId: undefined,
    timestamp: 1000,
    method: 'GET',
    path: '/old/0',
    status: 200,
    durationMs: 0,
    bytes: 0,
    ip: '198.51.100.7',
    userAgent: 'old-agent',
    proto: 'HTTP/1.1',
    host: 'old.localhost',
  });
  assert.deepEqual(
    (await repo.list('acc_migrated_b', { limit: 10 })).map((r) => r.path),
    ['/old/4', '/old/3'],
  );
  // Retention finds both accounts by the new key (neither is in `accounts`).
  assert.equal(await repo.prune({ olderThanMs: 1002, maxPerAccount: 1 }), 3);
  assert.deepEqual(
    (await repo.list('acc_migrated_a', { limit: 10 })).map((r) => r.path),
    ['/old/2'],
  );
  assert.deepEqual(
    (await repo.list('acc_migrated_b', { limit: 10 })).map((r) => r.path),
    ['/old/4'],
  );
}

/**
 * Migration 020 gives records the local target that served them (routes): stored and listed
 * after it, dropped (the records kept) by its down, and the records still readable when it runs
 * again. `db` is an empty database (or schema).
 */
export async function checkRequestTargetMigration(
  db: Kysely<Database>,
  repoFor: (db: Kysely<Database>) => RequestRepo,
  schema?: string,
): Promise<void> {
  await migrateToLatest(db, schema);
  const record = (path: string, target: string | undefined) => ({
    accountId: 'acc_target',
    tunnelId: 'tun_target',
    timestamp: 2000 + path.length,
    method: 'GET',
    path,
    status: 200,
    durationMs: 1,
    bytes: 2,
    ip: '198.51.100.8',
    userAgent: 'target-agent',
    proto: 'HTTP/1.1',
    host: 'target.localhost',
    target,
  });
  await repoFor(db).insertBatch([record('/api/x', 'localhost:4000'), record('/main', undefined)]);
  const listed = await repoFor(db).list('acc_target', { limit: 10 });
  assert.deepEqual(
    listed.map((r) => [r.path, r.target]),
    [
      ['/api/x', 'localhost:4000'],
      ['/main', undefined],
    ],
  );

  await migrateTo(db, '016_pools', schema);
  await migrateToLatest(db, schema);
  const again = await repoFor(db).list('acc_target', { limit: 10 });
  assert.deepEqual(
    again.map((r) => [r.id, r.path, r.target]),
    listed.map((r) => [r.id, r.path, undefined]),
    'the down dropped the targets and kept the records',
  );
}
