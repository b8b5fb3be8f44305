import { randomUUID } from "node:crypto";
import { afterAll, describe } from "vitest";
import {
  heldCheckpointCases,
  heldCheckpointCountCase,
} from "../../store-kysely/test/held-checkpoint-cases.js";
import { SqliteStore } from "../src/index.js";
import { tempDir } from "./temp-dir.js";

describe("a pass's held checkpoints on a SQLite file", () => {
  const dir = tempDir();
  afterAll(() => dir.dispose());
  const open = async () => {
    const path = dir.file(`${randomUUID()}.sqlite`);
    const reopen = () => SqliteStore.open({ path });
    return { store: await reopen(), reopen };
  };
  heldCheckpointCases(open, (store) => store.close());
  heldCheckpointCountCase(open, (store) => store.close());
});
