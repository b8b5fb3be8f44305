import { STORE_MIGRATIONS } from "@agboss/store-kysely";
import pg from "pg";
import { afterAll, describe, expect, test } from "vitest";
import { PostgresStore } from "../src/index.js";
import { olderSchema } from "./older-schema.js";
import { dropSchema, TEST_URL, uniqueSchema, withClient } from "./postgres-server.js";

const migration = (name: string) => STORE_MIGRATIONS.findIndex((m) => m.name === name);

const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

const indexDefinition = (schema: string, index: string) =>
  withClient(async (client) => {
    const { rows } = await client.query<{ indexdef: string }>(
      "select indexdef from pg_indexes where schemaname = $1 and indexname = $2",
      [schema, index],
    );
    return rows[0]?.indexdef;
  });

/** A schema with every migration before `before`, holding pauses given as (id, status, resolved_at, deadline). */
async function olderWith(before: string, pauses: [string, string, number | null, number | null][]) {
  const index = migration(before);
  expect(index).toBeGreaterThan(0);
  const name = uniqueSchema();
  schemas.push(name);
  await olderSchema(name, index);
  await withClient(async (client) => {
    for (const [id, status, resolvedAt, deadlineAt] of pauses) {
      await client.query(
        `insert into ${pg.escapeIdentifier(name)}.agboss_pauses (tenant_id, pause_id, idempotency_key, thread_id,
          root_execution_id, execution_id, owner_id, status, is_sent, channel, answered_by, agent, ask, step,
          asked_at, resolved_at, next_deadline_at)
         values ('t', $1, $2, 'th', 'r', 'r', 'o', $3, 0, 'c', 'thread-owner', 'a', '{}', '{}', 1, $4, $5)`,
        [id, `key-${id}`, status, resolvedAt, deadlineAt],
      );
    }
  });
  return name;
}

describe("the partial pause indexes on Postgres", () => {
  test("the deadline index: a schema from before the change upgrades, the index holds only pauses with a deadline, and the due one is still found", async () => {
    const name = await olderWith("pauses-deadline-index-partial", [
      ["none", "pending", null, null],
      ["due", "pending", null, 500],
    ]);
    expect(await indexDefinition(name, "agboss_pauses_deadline_idx")).not.toMatch(/WHERE/);

    const store = await PostgresStore.open({ connectionString: TEST_URL, schema: name });
    try {
      expect((await store.pauses.listDueDeadlines({ now: 1_000, limit: 10 })).map((p) => p.pauseId)).toEqual([
        "due",
      ]);
    } finally {
      await store.close();
    }
    expect(await indexDefinition(name, "agboss_pauses_deadline_idx")).toMatch(
      /WHERE \(next_deadline_at IS NOT NULL\)/,
    );
  });

  test("the resolved index: a schema from before the change upgrades, the index holds only pauses with an answer's time, and the sweep and retention still find theirs", async () => {
    const name = await olderWith("pauses-resolved-index-partial", [
      ["waiting", "pending", null, null],
      ["answered", "resolved", 10, null],
      ["taken", "taken", 20, null],
    ]);
    expect(await indexDefinition(name, "agboss_pauses_resolved_idx")).not.toMatch(/WHERE/);

    const store = await PostgresStore.open({ connectionString: TEST_URL, schema: name });
    try {
      expect(
        (await store.pauses.listResolvedBefore({ before: 100, limit: 10 })).map((p) => p.pauseId),
      ).toEqual(["answered"]);
      expect(await store.pauses.deleteResolvedBefore(25)).toBe(1);
    } finally {
      await store.close();
    }
    expect(await indexDefinition(name, "agboss_pauses_resolved_idx")).toMatch(
      /WHERE \(resolved_at IS NOT NULL\)/,
    );
  });
});
