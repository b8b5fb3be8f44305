import {
  STORE_MIGRATION_LOCK_TABLE,
  STORE_MIGRATION_TABLE,
  STORE_MIGRATIONS,
  StoreMigrationProvider,
} from "@agboss/store-kysely";
import { Kysely, PostgresDialect } from "kysely";
import { Migrator } from "kysely/migration";
import pg from "pg";
import { POSTGRES_CAPABILITIES } from "../src/index.js";
import { TEST_URL } from "./postgres-server.js";

/**
 * Creates `schema` with the tables of an older store: every migration before the one named `before` (or
 * the first `before` migrations). A store opened on it later migrates the rest.
 */
export async function olderSchema(schema: string, before: string | number): Promise<void> {
  const count = typeof before === "number" ? before : STORE_MIGRATIONS.findIndex((m) => m.name === before);
  if (count <= 0) throw new Error(`no migration before ${String(before)}`);
  const db = new Kysely<unknown>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: TEST_URL }) }),
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
