import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { after, describe, it } from 'node:test';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { checkRequestsMigration } from './migrations.contract.js';
import { createRequestRepo } from './requests/requests-repo.js';
import { isPostgresUrl, openStore } from './open-store.js';
import type { Database } from './schema.js';
import type { Store } from './store.js';
import { runStoreContract } from './store.contract.js';

// Runs the Store contract against a real PostgreSQL named by
// SVC_TEST_DATABASE_URL (scripts/start-test-postgres.sh starts one). Every
// open() gets a fresh schema, selected through the connection's search_path,
// so runs never see each other's rows; the schemas are dropped at the end.

const SKIP_NOTICE = 'skipping PostgreSQL store suite: set SVC_TEST_DATABASE_URL (apt-get install postgresql)';
const baseUrl = process.env.SVC_TEST_DATABASE_URL;

if (baseUrl === undefined || baseUrl === '') {
  if (process.env.CI === 'true') {
    it('PostgreSQL store suite', () => {
      assert.fail('SVC_TEST_DATABASE_URL is unset; CI must run the PostgreSQL suite (export it from scripts/start-test-postgres.sh)');
    });
  } else {
    process.stderr.write(`${SKIP_NOTICE}\n`);
    it('PostgreSQL store suite', { skip: SKIP_NOTICE }, () => {});
  }
} else if (!isPostgresUrl(baseUrl)) {
  it('PostgreSQL store suite', () => {
    assert.fail('SVC_TEST_DATABASE_URL must be a postgres:// or postgresql:// URL');
  });
} else {
  runPostgresSuites(baseUrl);
}

function runPostgresSuites(url: string): void {
  const schemas: string[] = [];

  async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  }

  // A new empty schema and a URL whose connections use it.
  async function freshSchemaUrl(): Promise<string> {
    const schema = `svc_test_${randomBytes(6).toString('hex')}`;
    await admin((c) => c.query(`create schema ${schema}`));
    schemas.push(schema);
    const scoped = new URL(url);
    scoped.searchParams.set('options', `-c search_path=${schema}`);
    return scoped.toString();
  }

  after(async () => {
    if (schemas.length > 0) await admin((c) => c.query(`drop schema ${schemas.join(', ')} cascade`));
  });

  runStoreContract('postgres', async (now) => openStore({ databaseUrl: await freshSchemaUrl(), dataDir: tmpdir(), now }));

  describe('PostgreSQL engine', () => {
    it('returns bigint columns and counts as numbers', async () => {
      const store = await openStore({ databaseUrl: await freshSchemaUrl(), dataDir: tmpdir() });
      try {
        const a = await store.accounts.create({ email: 'n@example.com', name: 'N', plan: 'free' });
        const read = await store.accounts.byId(a.id);
        assert.equal(typeof read?.createdAt, 'number');
        assert.equal(await store.accounts.count(), 1);
      } finally {
        await store.close();
      }
    });

    it('migration 004 keeps every inspector record under the new key', async () => {
      // The store itself runs the migrations on open; openStore first makes int8 come back as a number.
      await (await openStore({ databaseUrl: await freshSchemaUrl(), dataDir: tmpdir() })).close();
      const scopedUrl = await freshSchemaUrl();
      const schema = new URL(scopedUrl).searchParams.get('options')!.split('=')[1]!;
      const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: scopedUrl, max: 1 }) }) });
      try {
        await checkRequestsMigration(db, (migrated) => createRequestRepo(migrated), schema);
        const { rows } = await admin((c) =>
          c.query<{ indexname: string }>('select indexname from pg_indexes where schemaname = $1 and tablename = $2', [schema, 'requests']),
        );
        assert.deepEqual(
          rows.map((r) => r.indexname),
          ['requests_clustered_pk'],
          'only the new key indexes the table',
        );
      } finally {
        await db.destroy();
      }
    });

    it('several nodes opening one fresh database at once migrate it once', async () => {
      const scopedUrl = await freshSchemaUrl();
      const stores: Store[] = await Promise.all([1, 2, 3].map(() => openStore({ databaseUrl: scopedUrl, dataDir: tmpdir() })));
      try {
        await Promise.all(stores.map((s, i) => s.accounts.create({ email: `node${i}@example.com`, name: `n${i}`, plan: 'free' })));
        for (const s of stores) assert.equal(await s.accounts.count(), 3);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });
  });
}
