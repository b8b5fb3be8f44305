import { randomUUID } from "node:crypto";
import { type AgbossDatabase, type KyselyCheckpointSaver, KyselyStore } from "@agboss/store-kysely";
import { validate } from "@langchain/langgraph-checkpoint-validation";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { afterAll } from "vitest";
import { SQLITE_CAPABILITIES, SqliteStore } from "../src/index.js";
import { tempDir } from "./temp-dir.js";

const dir = tempDir();
const closers = new Map<KyselyCheckpointSaver, () => Promise<void>>();
afterAll(() => dir.dispose());

const destroyCheckpointer = async (checkpointer: KyselyCheckpointSaver) => {
  await closers.get(checkpointer)?.();
  closers.delete(checkpointer);
};

validate<KyselyCheckpointSaver>({
  checkpointerName: "@agboss/store-sqlite",
  async createCheckpointer() {
    const store = await SqliteStore.open({ path: dir.file(`${randomUUID()}.sqlite`) });
    closers.set(store.checkpointer, () => store.close());
    return store.checkpointer;
  },
  destroyCheckpointer,
});

// The one-statement read a dialect with a JSON table function makes (a SQLite reached over a network,
// where a statement is a round trip), exercised on a local file with `json_each`.
validate<KyselyCheckpointSaver>({
  checkpointerName: "@agboss/store-kysely with jsonObjectEntries json_each, on sqlite",
  async createCheckpointer() {
    const db = new Kysely<AgbossDatabase>({
      dialect: new SqliteDialect({ database: new Database(dir.file(`${randomUUID()}.sqlite`)) }),
    });
    const store = new KyselyStore({
      db,
      capabilities: { ...SQLITE_CAPABILITIES, jsonObjectEntries: "json_each" },
      name: "sqlite-read-in-one",
      onClose: () => db.destroy(),
    });
    await store.migrate();
    closers.set(store.checkpointer, () => store.close());
    return store.checkpointer;
  },
  destroyCheckpointer,
});
