import { type Kysely, sql } from "kysely";
import { Migrator } from "kysely/migration";
import type { StoreDialectCapabilities } from "../store-dialect-capabilities.js";
import { StoreMigrationProvider } from "./store-migration-provider.js";

/** The table where kysely records which store migrations ran. */
export const STORE_MIGRATION_TABLE = "agboss_migration";
/** The table kysely locks while migrating. */
export const STORE_MIGRATION_LOCK_TABLE = "agboss_migration_lock";

/** Brings the store's schema to the latest version; throws the first migration error. */
export async function migrateStore(
  db: Kysely<unknown>,
  capabilities: StoreDialectCapabilities,
): Promise<void> {
  const run = async (target: Kysely<unknown>) => {
    const migrator = new Migrator({
      db: target,
      provider: new StoreMigrationProvider(capabilities),
      migrationTableName: STORE_MIGRATION_TABLE,
      migrationLockTableName: STORE_MIGRATION_LOCK_TABLE,
    });
    const { error } = await migrator.migrateToLatest();
    if (error !== undefined) throw error instanceof Error ? error : new Error(String(error));
  };
  if (!capabilities.lockDatabaseForMigrations) return run(db);
  await db.connection().execute(async (connection) => {
    await sql.raw(capabilities.beginWriteTransaction).execute(connection);
    try {
      await run(connection);
      await sql`commit`.execute(connection);
    } catch (error) {
      await sql`rollback`.execute(connection);
      throw error;
    }
  });
}
