import {
  STORE_MIGRATION_LOCK_TABLE,
  STORE_MIGRATION_TABLE,
  STORE_MIGRATIONS,
  StoreMigrationProvider,
} from "@agboss/store-kysely";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { Migrator } from "kysely/migration";
import { SQLITE_CAPABILITIES } from "../src/index.js";

/**
 * Opens a new SQLite file at `path` with the schema of an older store: every migration before the one
 * named `before` (or the first `before` migrations). The caller fills it and closes it before a store
 * opens it and migrates the rest.
 */
export async function olderFile(path: string, before: string | number): Promise<Database.Database> {
  const count = typeof before === "number" ? before : STORE_MIGRATIONS.findIndex((m) => m.name === before);
  if (count <= 0) throw new Error(`no migration before ${String(before)}`);
  const database = new Database(path);
  // Not destroyed: that would close the database, which the caller goes on using.
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database }) });
  const { error } = await new Migrator({
    db,
    provider: new StoreMigrationProvider(SQLITE_CAPABILITIES, STORE_MIGRATIONS.slice(0, count)),
    migrationTableName: STORE_MIGRATION_TABLE,
    migrationLockTableName: STORE_MIGRATION_LOCK_TABLE,
  }).migrateToLatest();
  if (error !== undefined) {
    database.close();
    throw error;
  }
  return database;
}
