import { PauseStatus } from "@agboss/core";
import { type AgbossDatabase, KyselyStore } from "@agboss/store-kysely";
import Database from "better-sqlite3";
import { type CompiledQuery, Kysely, SqliteDialect } from "kysely";
import { afterAll, describe, expect, test } from "vitest";
import { SQLITE_CAPABILITIES, SqliteStore } from "../src/index.js";
import { olderFile } from "./older-file.js";
import { tempDir } from "./temp-dir.js";

const dir = tempDir();
afterAll(() => dir.dispose());

const indexesOf = (database: Database.Database, table: string) =>
  (
    database.prepare("select name from sqlite_master where type = 'index' and tbl_name = ?").all(table) as {
      name: string;
    }[]
  )
    .map((row) => row.name)
    .filter((name) => !name.startsWith("sqlite_autoindex"))
    .sort();

describe("the budget ledger and the resolved-pauses index on SQLite", () => {
  test("a file at schema version 2 upgrades: its pauses stay, the ledger table and new index appear", async () => {
    const path = dir.file("v2.sqlite");
    const database = await olderFile(path, 2);
    database
      .prepare(
        `insert into agboss_pauses (tenant_id, pause_id, idempotency_key, thread_id, root_execution_id, execution_id,
          owner_id, status, is_sent, channel, answered_by, agent, ask, step, answer, asked_at, resolved_at)
         values ('t', 'p', 'k', 'th', 'r', 'r', 'o', 'resolved', 1, 'c', 'thread-owner', 'a', '{}', '{}',
          '{"decision":true}', 1, 2)`,
      )
      .run();
    expect(indexesOf(database, "agboss_pauses")).toContain("agboss_pauses_retention_idx");
    database.close();

    const store = await SqliteStore.open({ path });
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
    const after = new Database(path, { readonly: true });
    try {
      expect(indexesOf(after, "agboss_pauses")).not.toContain("agboss_pauses_retention_idx");
      expect(indexesOf(after, "agboss_pauses")).toContain("agboss_pauses_resolved_idx");
      expect(indexesOf(after, "agboss_budget_ledger")).toEqual(["agboss_budget_ledger_expires_idx"]);
    } finally {
      after.close();
    }
  });

  test("reads find counters by primary key and deleteExpired by the expires_at index", async () => {
    const database = new Database(dir.file("plans.sqlite"));
    const queries: CompiledQuery[] = [];
    const db = new Kysely<AgbossDatabase>({
      dialect: new SqliteDialect({ database }),
      log: (event) => {
        if (event.level === "query") queries.push(event.query);
      },
    });
    const store = new KyselyStore({ db, capabilities: SQLITE_CAPABILITIES, name: "sqlite:plans" });
    await store.migrate();
    const insert = database.prepare(
      `insert into agboss_budget_ledger (tenant_id, budget, window_start, model_calls, input_tokens, output_tokens,
        expires_at) values (?, ?, ?, 1, 1, 1, ?)`,
    );
    database.transaction(() => {
      for (let i = 0; i < 20_000; i += 1) insert.run(`tenant-${i % 50}`, `budget-${i % 7}`, i, i + 1_000);
    })();
    database.exec("analyze");

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
    for (const query of statements) {
      const plan = database.prepare(`explain query plan ${query.sql}`).all(...query.parameters) as {
        detail: string;
      }[];
      for (const row of plan) expect(row.detail, query.sql).not.toMatch(/^SCAN agboss_budget_ledger\b/);
      expect(plan.map((row) => row.detail).join("\n"), query.sql).toMatch(
        /USING (PRIMARY KEY|INDEX sqlite_autoindex_agboss_budget_ledger_1|INDEX agboss_budget_ledger_expires_idx)/,
      );
    }
    await store.close();
    await db.destroy();
  });
});
