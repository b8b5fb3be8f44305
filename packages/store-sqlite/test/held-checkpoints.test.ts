import { randomUUID } from "node:crypto";
import { afterAll, describe } from "vitest";
import { heldCheckpointCases } from "../../store-kysely/test/held-checkpoint-cases.js";
import { SqliteStore } from "../src/index.js";
import { tempDir } from "./temp-dir.js";

describe("a pass's held checkpoints on a SQLite file", () => {
  const dir = tempDir();
  afterAll(() => dir.dispose());
  heldCheckpointCases(
    async () => {
      const path = dir.file(`${randomUUID()}.sqlite`);
      const open = () => SqliteStore.open({ path });
      return { store: await open(), reopen: open };
    },
    (store) => store.close(),
  );
});
