/* eslint-disable @typescript-eslint/no-explicit-any -- Kysely's introspection API is typed for any database. */
import {
  PostgresDialect,
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';

/** Kysely's own tables, which its migrator looks for with `withInternalKyselyTables`. */
const KYSELY_TABLES = ['kysely_migration', 'kysely_migration_lock'];

/**
 * PostgreSQL as Kysely speaks it, except that introspection reads the store's own schema only
 * (the first of the search_path, where the store keeps its tables).
 *
 * Kysely's migrator lists the database's tables before every migration run, and its stock
 * introspector reads every schema of the database and looks each column up by name with
 * `pg_get_serial_sequence`, which takes no lock. A table that anything else in the database
 * dropped at that moment (another application, another svcRouter schema, a test's teardown)
 * failed the start of a node with `relation "…" does not exist`, or with
 * `column "state" of relation "domains" does not exist` when the drop came between the two lookups.
 * This one resolves nothing by name and never looks beyond its own schema.
 */
export class StorePostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}

interface ColumnRow {
  table: string;
  kind: string;
  schema: string;
  column: string;
  not_null: boolean;
  has_default: boolean;
  type: string;
  type_schema: string;
  comment: string | null;
  auto_incrementing: boolean;
}

class CurrentSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<any>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace`.execute(this.db);
    return rows.map((row) => ({ name: row.name }));
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    // A serial column is one a sequence depends on automatically (what pg_get_serial_sequence
    // finds), read from pg_depend by OID rather than by name.
    const { rows } = await sql<ColumnRow>`
      select c.relname as "table", c.relkind as kind, ns.nspname as schema, a.attname as "column",
        a.attnotnull as not_null, a.atthasdef as has_default, typ.typname as type,
        typns.nspname as type_schema, col_description(a.attrelid, a.attnum) as comment,
        (a.attidentity <> '' or exists (
          select 1 from pg_catalog.pg_depend dep
          join pg_catalog.pg_class seq on seq.oid = dep.objid and seq.relkind = 'S'
          where dep.refobjid = c.oid and dep.refobjsubid = a.attnum and dep.deptype in ('a', 'i')
        )) as auto_incrementing
      from pg_catalog.pg_class c
      join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      join pg_catalog.pg_attribute a on a.attrelid = c.oid
      join pg_catalog.pg_type typ on typ.oid = a.atttypid
      join pg_catalog.pg_namespace typns on typns.oid = typ.typnamespace
      where ns.nspname = current_schema() and c.relkind in ('r', 'v', 'p') and a.attnum > 0 and not a.attisdropped
      order by c.relname, a.attnum`.execute(this.db);
    const tables = new Map<string, TableMetadata>();
    for (const row of rows) {
      if (!options.withInternalKyselyTables && KYSELY_TABLES.includes(row.table)) continue;
      let table = tables.get(row.table);
      if (!table) {
        table = { name: row.table, schema: row.schema, isView: row.kind === 'v', columns: [] };
        tables.set(row.table, table);
      }
      table.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        isNullable: !row.not_null,
        hasDefaultValue: row.has_default,
        isAutoIncrementing: row.auto_incrementing,
        comment: row.comment ?? undefined,
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}
