import { afterAll, describe } from "vitest";
import { checkpointHistoryCases } from "../../store-kysely/test/checkpoint-history-cases.js";
import { PostgresStore } from "../src/index.js";
import { dropSchema, TEST_URL, uniqueSchema } from "./postgres-server.js";

describe("checkpoint history on Postgres", () => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas.splice(0)) await dropSchema(schema);
  });
  checkpointHistoryCases(
    () => {
      const schema = uniqueSchema();
      schemas.push(schema);
      return PostgresStore.open({ connectionString: TEST_URL, schema });
    },
    (store) => store.close(),
  );
});
