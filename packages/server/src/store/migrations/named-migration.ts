import type { Migration } from 'kysely';

/** A migration as the store's Migrator lists them. */
export interface NamedMigration extends Migration {
  /** Sort order is the name's order, so names start with a zero-padded number. */
  name: string;
}
