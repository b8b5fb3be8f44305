import {
  STORE_MIGRATION_LOCK_TABLE,
  STORE_MIGRATION_TABLE,
  STORE_MIGRATIONS,
  StoreMigrationProvider,
} from "@agboss/store-kysely";
import { Kysely } from "kysely";
import { Migrator } from "kysely/migration";
import pg from "pg";
import { POSTGRES_CAPABILITIES } from "../src/index.js";
import { SchemaScopedPostgresDialect } from "../src/schema-introspector.js";
import { TEST_URL } from "./postgres-server.js";

/**
 * Creates `schema` with the tables of an older store: every migration before the one named `before` (or
 * the first `before` migrations). A store opened on it later migrates the rest.
 */
export async function olderSchema(schema: string, before: string | number): Promise<void> {
  const count = typeof before === "number" ? before : STORE_MIGRATIONS.findIndex((m) => m.name === before);
  if (count <= 0) throw new Error(`no migration before ${String(before)}`);
  // Scoped to `schema`, as the store's own migrator is: kysely's own introspector reads every schema, and
  // fails when another test drops its schema at that moment.
  const db = new Kysely<unknown>({
    dialect: new SchemaScopedPostgresDialect({ pool: new pg.Pool({ connectionString: TEST_URL }) }, schema),
  }).withSchema(schema);
  try {
    const { error } = await new Migrator({
      db,
      provider: new StoreMigrationProvider(POSTGRES_CAPABILITIES, STORE_MIGRATIONS.slice(0, count)),
      migrationTableName: STORE_MIGRATION_TABLE,
      migrationLockTableName: STORE_MIGRATION_LOCK_TABLE,
      migrationTableSchema: schema,
    }).migrateToLatest();
    if (error !== undefined) throw error;
  } finally {
    await db.destroy();
  }
}
