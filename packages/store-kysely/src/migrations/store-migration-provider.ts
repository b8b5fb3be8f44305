import type { Migration, MigrationProvider } from "kysely/migration";
import type { StoreDialectCapabilities } from "../store-dialect-capabilities.js";
import type { StoreMigration } from "./store-migration.js";
import { STORE_MIGRATIONS } from "./store-migrations.js";

/**
 * Serves an ordered list of {@link StoreMigration}s to kysely's `Migrator`, naming each by its
 * zero-padded position so kysely's alphabetical order is the list's order.
 */
export class StoreMigrationProvider implements MigrationProvider {
  readonly #capabilities: StoreDialectCapabilities;
  readonly #migrations: readonly StoreMigration[];

  constructor(
    capabilities: StoreDialectCapabilities,
    migrations: readonly StoreMigration[] = STORE_MIGRATIONS,
  ) {
    this.#capabilities = capabilities;
    this.#migrations = migrations;
  }

  async getMigrations(): Promise<Record<string, Migration>> {
    const entries = this.#migrations.map((migration, index): [string, Migration] => [
      `${String(index + 1).padStart(4, "0")}_${migration.name}`,
      { up: (db) => migration.up(db, this.#capabilities) },
    ]);
    return Object.fromEntries(entries);
  }
}
