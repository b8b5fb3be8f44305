import { randomUUID } from "node:crypto";
import { describeStoreConformance } from "@agboss/testing";
import { afterAll } from "vitest";
import { SqliteStore } from "../src/index.js";
import { tempDir } from "./temp-dir.js";

const dir = tempDir();
afterAll(() => dir.dispose());

describeStoreConformance({
  name: "sqlite",
  createStore: () => SqliteStore.open({ path: dir.file(`${randomUUID()}.sqlite`) }),
  destroyStore: (store) => store.close(),
  createPeer: (store) => SqliteStore.open({ path: (store as SqliteStore).path }),
});
