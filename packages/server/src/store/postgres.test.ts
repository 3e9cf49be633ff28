import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { after, describe, it } from 'node:test';
import { Kysely, PostgresDialect, type TableMetadata } from 'kysely';
import pg from 'pg';
import { checkRequestsMigration, checkRequestTargetMigration } from './migrations/migrations.contract.js';
import { createRequestRepo } from './requests/requests-repo.js';
import { migrateToLatest } from './migrations/migrations.js';
import { isPostgresUrl, openStore } from './open-store.js';
import { StorePostgresDialect } from './engine/postgres-schema-dialect.js';
import type { Database } from './schema.js';
import type { Store } from './store.js';
import { runStoreContract } from './store.contract.js';

// Runs the Store contract against a real PostgreSQL named by
// SVC_TEST_DATABASE_URL (scripts/start-test-postgres.sh starts one). Every
// open() gets a fresh schema, selected through the connection's search_path,
// so runs never see each other's rows; the schemas are dropped at the end.

const SKIP_NOTICE = 'skipping PostgreSQL store suite: set SVC_TEST_DATABASE_URL (apt-get install postgresql)';
const baseUrl = process.env.SVC_TEST_DATABASE_URL;
/** Store openings in the churn test (each lists the tables several times before it migrates). */
const STORES_OPENED_UNDER_CHURN = 10;

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

  const schemaOf = (scopedUrl: string): string => new URL(scopedUrl).searchParams.get('options')!.split('=')[1]!;

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
      const schema = schemaOf(scopedUrl);
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

    it('migration 020 adds the request target column, and its down drops it with the records kept', async () => {
      await (await openStore({ databaseUrl: await freshSchemaUrl(), dataDir: tmpdir() })).close();
      const scopedUrl = await freshSchemaUrl();
      const schema = schemaOf(scopedUrl);
      const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: scopedUrl, max: 1 }) }) });
      try {
        await checkRequestTargetMigration(db, (migrated) => createRequestRepo(migrated), schema);
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

  describe('introspection of the store schema only (postgres-schema-dialect.ts)', () => {
    const kysely = (scopedUrl: string, dialect: typeof PostgresDialect): Kysely<Database> =>
      new Kysely<Database>({ dialect: new dialect({ pool: new pg.Pool({ connectionString: scopedUrl, max: 1 }) }) });

    // The stock introspector reads every schema, and other suites drop theirs meanwhile: the
    // very failure the store's dialect avoids, so it gets a few tries here.
    async function stockTables(stock: Kysely<Database>, withInternalKyselyTables: boolean): Promise<TableMetadata[]> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await stock.introspection.getTables({ withInternalKyselyTables });
        } catch (error) {
          if (attempt === 3) throw error;
        }
      }
    }

    it("describes the store's tables as Kysely's own introspector does, and no other schema's", async () => {
      const scopedUrl = await freshSchemaUrl();
      const schema = schemaOf(scopedUrl);
      const elsewhere = schemaOf(await freshSchemaUrl());
      await admin((c) => c.query(`create table ${elsewhere}.domains (id serial primary key, note text)`));
      const ours = kysely(scopedUrl, StorePostgresDialect);
      const stock = kysely(scopedUrl, PostgresDialect);
      try {
        await migrateToLatest(ours, schema);
        // Serial and identity columns, a comment and a view, which the store's own tables lack.
        await admin((c) =>
          c.query(
            `create table ${schema}.probe (id serial primary key, n int generated by default as identity, note text not null default '');` +
              `comment on column ${schema}.probe.note is 'a note'; create view ${schema}.probe_view as select id from ${schema}.probe`,
          ),
        );
        for (const withInternalKyselyTables of [false, true]) {
          const expected = (await stockTables(stock, withInternalKyselyTables)).filter((t) => t.schema === schema);
          assert.deepEqual(await ours.introspection.getTables({ withInternalKyselyTables }), expected);
        }
        const tables = await ours.introspection.getTables();
        assert.ok(tables.some((t) => t.name === 'domains' && t.columns.some((c) => c.name === 'state')));
        assert.ok(!tables.some((t) => t.name.startsWith('kysely_')), 'no Kysely table without withInternalKyselyTables');
        assert.deepEqual(
          tables.filter((t) => t.schema !== schema),
          [],
        );
        assert.ok((await ours.introspection.getSchemas()).some((s) => s.name === elsewhere));
      } finally {
        await Promise.all([ours.destroy(), stock.destroy()]);
      }
    });

    it('opens and migrates a store while another schema drops and creates tables all the time', async () => {
      // A table dropped while the stock introspector read the catalog failed the start with
      // `relation "…" does not exist` or `column "…" of relation "…" does not exist` (with Kysely's
      // dialect this test fails that way every time); the store's introspection never reads it.
      const churned = schemaOf(await freshSchemaUrl());
      let churning = true;
      let rounds = 0;
      const churn = admin(async (c) => {
        while (churning) {
          await c.query(`create table ${churned}.t (${Array.from({ length: 40 }, (_, i) => `c${i} int`).join(', ')})`);
          await c.query(`drop table ${churned}.t`);
          rounds++;
        }
      });
      try {
        for (let i = 0; i < STORES_OPENED_UNDER_CHURN; i++) {
          await (await openStore({ databaseUrl: await freshSchemaUrl(), dataDir: tmpdir() })).close();
        }
      } finally {
        churning = false;
        await churn;
      }
      assert.ok(rounds > STORES_OPENED_UNDER_CHURN, `the other schema changed ${rounds} times`);
    });
  });
}
