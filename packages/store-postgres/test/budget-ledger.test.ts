import { PauseStatus } from "@agboss/core";
import type { BudgetSpend } from "@agboss/core/store";
import { type AgbossDatabase, KyselyStore } from "@agboss/store-kysely";
import { type CompiledQuery, Kysely } from "kysely";
import pg from "pg";
import { afterAll, describe, expect, test } from "vitest";
import { POSTGRES_CAPABILITIES, PostgresStore } from "../src/index.js";
import { SchemaScopedPostgresDialect } from "../src/schema-introspector.js";
import { olderSchema } from "./older-schema.js";
import { dropSchema, TEST_URL, uniqueSchema, withClient } from "./postgres-server.js";

const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});
function schema(): string {
  const name = uniqueSchema();
  schemas.push(name);
  return name;
}

const indexesOf = (name: string, table: string) =>
  withClient(async (client) => {
    const { rows } = await client.query<{ indexname: string }>(
      "select indexname from pg_indexes where schemaname = $1 and tablename = $2 order by indexname",
      [name, table],
    );
    return rows.map((row) => row.indexname);
  });

describe("the budget ledger and the resolved-pauses index on Postgres", () => {
  test("a schema at version 2 upgrades: its pauses stay, the ledger table and new index appear", async () => {
    const name = schema();
    await olderSchema(name, 2);
    await withClient((client) =>
      client.query(
        `insert into ${pg.escapeIdentifier(name)}.agboss_pauses (tenant_id, pause_id, idempotency_key, thread_id,
          root_execution_id, execution_id, owner_id, status, is_sent, channel, answered_by, agent, ask, step, answer,
          asked_at, resolved_at)
         values ('t', 'p', 'k', 'th', 'r', 'r', 'o', 'resolved', 1, 'c', 'thread-owner', 'a', '{}', '{}',
          '{"decision":true}', 1, 2)`,
      ),
    );
    expect(await indexesOf(name, "agboss_pauses")).toContain("agboss_pauses_retention_idx");

    const store = await PostgresStore.open({ connectionString: TEST_URL, schema: name });
    try {
      expect((await store.pauses.listResolvedBefore({ before: 3, limit: 10 })).map((p) => p.pauseId)).toEqual(
        ["p"],
      );
      expect((await store.pauses.findByTenantIdAndPauseId("t", "p"))?.status).toBe(PauseStatus.Resolved);
      const key = { tenantId: "t", budget: "application/daily", windowStart: 0 };
      await store.budgets.charge([{ key, expiresAt: undefined }], {
        modelCalls: 1,
        inputTokens: 2,
        outputTokens: 3,
      });
      expect(await store.budgets.read([key])).toEqual([{ modelCalls: 1, inputTokens: 2, outputTokens: 3 }]);
    } finally {
      await store.close();
    }
    expect(await indexesOf(name, "agboss_pauses")).not.toContain("agboss_pauses_retention_idx");
    expect(await indexesOf(name, "agboss_pauses")).toContain("agboss_pauses_resolved_idx");
    expect(await indexesOf(name, "agboss_budget_ledger")).toEqual([
      "agboss_budget_ledger_expires_idx",
      "agboss_budget_ledger_pk",
    ]);
  });

  test("reads find counters by primary key and deleteExpired by the expires_at index", async () => {
    const name = schema();
    const queries: CompiledQuery[] = [];
    const db = new Kysely<AgbossDatabase>({
      dialect: new SchemaScopedPostgresDialect({ pool: new pg.Pool({ connectionString: TEST_URL }) }, name),
      log: (event) => {
        if (event.level === "query") queries.push(event.query);
      },
    });
    const store = new KyselyStore({
      db,
      schema: name,
      capabilities: POSTGRES_CAPABILITIES,
      name: "postgres:plans",
    });
    try {
      await store.migrate();
      const table = `${pg.escapeIdentifier(name)}.agboss_budget_ledger`;
      await withClient(async (client) => {
        await client.query(
          `insert into ${table} (tenant_id, budget, window_start, model_calls, input_tokens, output_tokens, expires_at)
           select 'tenant-' || (i % 50), 'budget-' || (i % 7), i, 1, 1, 1, i + 1000 from generate_series(0, 19999) as i`,
        );
        await client.query(`analyze ${table}`);
      });

      queries.length = 0;
      const keys = [
        { tenantId: "tenant-1", budget: "budget-1", windowStart: 351 },
        { tenantId: "*", budget: "budget-1", windowStart: 0 },
        { tenantId: "tenant-3", budget: "budget-3", windowStart: 3 },
      ];
      expect(await store.budgets.read(keys)).toEqual([
        { modelCalls: 1, inputTokens: 1, outputTokens: 1 },
        { modelCalls: 0, inputTokens: 0, outputTokens: 0 },
        { modelCalls: 1, inputTokens: 1, outputTokens: 1 },
      ]);
      expect(await store.budgets.deleteExpired(1_010)).toBe(10);
      const statements = queries.filter((q) => /agboss_budget_ledger/.test(q.sql));
      expect(statements).toHaveLength(2);
      const plans = await withClient(async (client) => {
        const found: string[] = [];
        for (const query of statements) {
          const { rows } = await client.query<{ "QUERY PLAN": string }>(`explain ${query.sql}`, [
            ...query.parameters,
          ]);
          found.push(rows.map((row) => row["QUERY PLAN"]).join("\n"));
        }
        return found;
      });
      for (const plan of plans) {
        expect(plan).not.toMatch(/Seq Scan on agboss_budget_ledger/);
        expect(plan).toMatch(
          /(Index|Index Only|Bitmap Index) Scan (using|on) (agboss_budget_ledger_pk|agboss_budget_ledger_expires_idx)/,
        );
      }
    } finally {
      await store.close();
      await db.destroy();
    }
  });

  test("two instances charging the same counters in opposite orders neither deadlock nor lose a count", async () => {
    const name = schema();
    const a = await PostgresStore.open({ connectionString: TEST_URL, schema: name });
    const b = await PostgresStore.open({ connectionString: TEST_URL, schema: name });
    try {
      const keys = ["*", "tenant-a", "tenant-b"].map((tenantId) => ({
        tenantId,
        budget: "daily",
        windowStart: 0,
      }));
      const one: BudgetSpend = { modelCalls: 1, inputTokens: 10, outputTokens: 1 };
      const rounds = 60;
      await Promise.all(
        Array.from({ length: rounds }, (_, i) => {
          const order = i % 2 === 0 ? keys : [...keys].reverse();
          return (i % 2 === 0 ? a : b).budgets.charge(
            order.map((key) => ({ key, expiresAt: undefined })),
            one,
          );
        }),
      );
      const total = { modelCalls: rounds, inputTokens: 10 * rounds, outputTokens: rounds };
      expect(await b.budgets.read(keys)).toEqual([total, total, total]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
