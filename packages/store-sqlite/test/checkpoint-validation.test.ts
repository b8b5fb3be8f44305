import { randomUUID } from "node:crypto";
import type { KyselyCheckpointSaver } from "@agboss/store-kysely";
import { validate } from "@langchain/langgraph-checkpoint-validation";
import { afterAll } from "vitest";
import { SqliteStore } from "../src/index.js";
import { tempDir } from "./temp-dir.js";

const dir = tempDir();
const stores = new Map<KyselyCheckpointSaver, SqliteStore>();
afterAll(() => dir.dispose());

validate<KyselyCheckpointSaver>({
  checkpointerName: "@agboss/store-sqlite",
  async createCheckpointer() {
    const store = await SqliteStore.open({ path: dir.file(`${randomUUID()}.sqlite`) });
    stores.set(store.checkpointer, store);
    return store.checkpointer;
  },
  async destroyCheckpointer(checkpointer) {
    await stores.get(checkpointer)?.close();
    stores.delete(checkpointer);
  },
});
