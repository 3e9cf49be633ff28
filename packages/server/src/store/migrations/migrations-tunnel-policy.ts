import type { Kysely } from 'kysely';
import type { NamedMigration } from './named-migration.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * A tunnel's policy (its access rules), as the bind carried it: JSON text, passwords only as
 * salted scrypt hashes; null for a tunnel without rules. Stored with the tunnel so every node
 * sees it, and so a bind without rules cannot take over a tunnel that has them.
 */
export const TUNNEL_POLICY_MIGRATIONS: readonly NamedMigration[] = [
  {
    name: '011_tunnel_policy',
    async up(db: Kysely<any>) {
      await db.schema.alterTable('tunnels').addColumn('policy', 'text').execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.alterTable('tunnels').dropColumn('policy').execute();
    },
  },
];
