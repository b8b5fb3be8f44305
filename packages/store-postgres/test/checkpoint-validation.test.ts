import type { KyselyCheckpointSaver } from "@agboss/store-kysely";
import { validate } from "@langchain/langgraph-checkpoint-validation";
import { PostgresStore } from "../src/index.js";
import { dropSchema, TEST_URL, uniqueSchema } from "./postgres-server.js";

const stores = new Map<KyselyCheckpointSaver, PostgresStore>();

validate<KyselyCheckpointSaver>({
  checkpointerName: "@agboss/store-postgres",
  async createCheckpointer() {
    const store = await PostgresStore.open({ connectionString: TEST_URL, schema: uniqueSchema() });
    stores.set(store.checkpointer, store);
    return store.checkpointer;
  },
  async destroyCheckpointer(checkpointer) {
    const store = stores.get(checkpointer);
    stores.delete(checkpointer);
    if (store === undefined) return;
    await store.close();
    await dropSchema(store.schema);
  },
});
