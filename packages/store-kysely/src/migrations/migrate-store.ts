import { type Kysely, sql } from "kysely";
import { Migrator } from "kysely/migration";
import type { StoreDialectCapabilities } from "../store-dialect-capabilities.js";
import { StoreMigrationProvider } from "./store-migration-provider.js";

/** The table where kysely records which store migrations ran. */
export const STORE_MIGRATION_TABLE = "agboss_migration";
/** The table kysely locks while migrating. */
export const STORE_MIGRATION_LOCK_TABLE = "agboss_migration_lock";

/** Where {@link migrateStore} keeps the migrator's own tables. */
export interface MigrateStoreOptions {
  /**
   * The database schema (Postgres) that holds the store and the migration tables; created when missing.
   * Without it the migrator would take a migration table in any other schema for its own.
   */
  readonly schema?: string | undefined;
}

/** Brings the store's schema to the latest version; throws the first migration error. */
export async function migrateStore(
  db: Kysely<unknown>,
  capabilities: StoreDialectCapabilities,
  options: MigrateStoreOptions = {},
): Promise<void> {
  const schema = options.schema;
  const run = async (target: Kysely<unknown>) => {
    const migrator = new Migrator({
      db: schema === undefined ? target : target.withSchema(schema),
      provider: new StoreMigrationProvider(capabilities),
      migrationTableName: STORE_MIGRATION_TABLE,
      migrationLockTableName: STORE_MIGRATION_LOCK_TABLE,
      ...(schema === undefined ? {} : { migrationTableSchema: schema }),
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
