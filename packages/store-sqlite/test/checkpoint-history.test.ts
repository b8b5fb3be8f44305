import { randomUUID } from "node:crypto";
import { afterAll, describe } from "vitest";
import { checkpointHistoryCases } from "../../store-kysely/test/checkpoint-history-cases.js";
import { SqliteStore } from "../src/index.js";
import { tempDir } from "./temp-dir.js";

describe("checkpoint history on a SQLite file", () => {
  const dir = tempDir();
  afterAll(() => dir.dispose());
  checkpointHistoryCases(
    () => SqliteStore.open({ path: dir.file(`${randomUUID()}.sqlite`) }),
    (store) => store.close(),
  );
});
