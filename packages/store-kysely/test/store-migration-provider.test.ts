import { describe, expect, test } from "vitest";
import { STORE_MIGRATIONS, type StoreDialectCapabilities, StoreMigrationProvider } from "../src/index.js";

const capabilities: StoreDialectCapabilities = {
  beginWriteTransaction: "begin",
  lockRowsForUpdate: true,
  supportsReturning: true,
  blobType: "bytea",
  lockDatabaseForMigrations: false,
  groupCommit: false,
};

describe("StoreMigrationProvider", () => {
  test("names each migration by its position so kysely's alphabetical order is the list's order", async () => {
    const migrations = await new StoreMigrationProvider(capabilities).getMigrations();
    const names = Object.keys(migrations);
    expect(names).toHaveLength(STORE_MIGRATIONS.length);
    expect(names).toEqual([...names].sort());
    expect(names[0]).toMatch(/^0001_/);
    expect(names.map((n) => n.slice(5))).toEqual(STORE_MIGRATIONS.map((m) => m.name));
  });

  test("passes the capabilities to every step", async () => {
    const seen: StoreDialectCapabilities[] = [];
    const provider = new StoreMigrationProvider(capabilities, [
      { name: "a", up: async (_db, c) => void seen.push(c) },
      { name: "b", up: async (_db, c) => void seen.push(c) },
    ]);
    const migrations = await provider.getMigrations();
    for (const name of Object.keys(migrations).sort()) await migrations[name]!.up({} as never);
    expect(seen).toEqual([capabilities, capabilities]);
  });
});
