import { describeStoreConformance } from "@agboss/testing";
import { PostgresStore } from "../src/index.js";
import { dropSchema, TEST_URL, uniqueSchema } from "./postgres-server.js";

describeStoreConformance({
  name: "postgres",
  createStore: () => PostgresStore.open({ connectionString: TEST_URL, schema: uniqueSchema() }),
  async destroyStore(store) {
    await store.close();
    await dropSchema((store as PostgresStore).schema);
  },
  // Another instance: its own pool over the same schema.
  createPeer: (store) =>
    PostgresStore.open({ connectionString: TEST_URL, schema: (store as PostgresStore).schema }),
});
