import { randomUUID } from "node:crypto";
import { type AgbossDatabase, KyselyStore } from "@agboss/store-kysely";
import { describeStoreConformance } from "@agboss/testing";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { afterAll } from "vitest";
import { SQLITE_CAPABILITIES } from "../src/index.js";
import { tempDir } from "./temp-dir.js";

const dir = tempDir();
afterAll(() => dir.dispose());

// The read-back path a dialect without `returning` takes, exercised on SQLite.
describeStoreConformance({
  name: "kysely on sqlite without returning",
  async createStore() {
    const db = new Kysely<AgbossDatabase>({
      dialect: new SqliteDialect({ database: new Database(dir.file(`${randomUUID()}.sqlite`)) }),
    });
    const store = new KyselyStore({
      db,
      capabilities: { ...SQLITE_CAPABILITIES, supportsReturning: false },
      name: "sqlite-no-returning",
      onClose: () => db.destroy(),
    });
    await store.migrate();
    return store;
  },
  destroyStore: (store) => store.close(),
});
