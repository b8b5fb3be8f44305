import { STORE_MIGRATIONS } from "@agboss/store-kysely";
import pg from "pg";
import { afterAll, describe, expect, test } from "vitest";
import { PostgresStore } from "../src/index.js";
import { olderSchema } from "./older-schema.js";
import { dropSchema, TEST_URL, uniqueSchema, withClient } from "./postgres-server.js";

const MIGRATION = STORE_MIGRATIONS.findIndex((m) => m.name === "pauses-deadline-index-partial");

const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

const indexDefinition = (schema: string) =>
  withClient(async (client) => {
    const { rows } = await client.query<{ indexdef: string }>(
      "select indexdef from pg_indexes where schemaname = $1 and indexname = 'agboss_pauses_deadline_idx'",
      [schema],
    );
    return rows[0]?.indexdef;
  });

describe("the deadline index on Postgres", () => {
  test("a schema from before the change upgrades: the index holds only pauses with a deadline, and the due one is still found", async () => {
    expect(MIGRATION).toBeGreaterThan(0);
    const name = uniqueSchema();
    schemas.push(name);
    await olderSchema(name, MIGRATION);
    await withClient((client) =>
      client.query(
        `insert into ${pg.escapeIdentifier(name)}.agboss_pauses (tenant_id, pause_id, idempotency_key, thread_id,
          root_execution_id, execution_id, owner_id, status, is_sent, channel, answered_by, agent, ask, step,
          asked_at, next_deadline_at)
         values ('t', 'none', 'k1', 'th', 'r', 'r', 'o', 'pending', 0, 'c', 'thread-owner', 'a', '{}', '{}', 1, null),
                ('t', 'due', 'k2', 'th', 'r', 'r', 'o', 'pending', 0, 'c', 'thread-owner', 'a', '{}', '{}', 1, 500)`,
      ),
    );
    expect(await indexDefinition(name)).not.toMatch(/WHERE/);

    const store = await PostgresStore.open({ connectionString: TEST_URL, schema: name });
    try {
      expect((await store.pauses.listDueDeadlines({ now: 1_000, limit: 10 })).map((p) => p.pauseId)).toEqual([
        "due",
      ]);
    } finally {
      await store.close();
    }
    expect(await indexDefinition(name)).toMatch(/WHERE \(next_deadline_at IS NOT NULL\)/);
  });
});
