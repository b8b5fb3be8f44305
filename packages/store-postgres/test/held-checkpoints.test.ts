import { afterAll, describe } from "vitest";
import { heldCheckpointCases } from "../../store-kysely/test/held-checkpoint-cases.js";
import { PostgresStore } from "../src/index.js";
import { dropSchema, TEST_URL, uniqueSchema } from "./postgres-server.js";

describe("a pass's held checkpoints on Postgres", () => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas.splice(0)) await dropSchema(schema);
  });
  heldCheckpointCases(
    async () => {
      const schema = uniqueSchema();
      schemas.push(schema);
      const open = () => PostgresStore.open({ connectionString: TEST_URL, schema });
      return { store: await open(), reopen: open };
    },
    (store) => store.close(),
  );
});
