import { STORE_MIGRATIONS } from "@agboss/store-kysely";
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import { SqliteStore } from "../src/index.js";
import { olderFile } from "./older-file.js";
import { tempDir } from "./temp-dir.js";

const MIGRATION = STORE_MIGRATIONS.findIndex((m) => m.name === "pauses-deadline-index-partial");

/** How many entries an index holds: the cells of its leaf pages, as SQLite's page statistics count them. */
const entries = (database: Database.Database, index: string) =>
  (
    database
      .prepare("select coalesce(sum(ncell), 0) as n from dbstat where name = ? and pagetype = 'leaf'")
      .get(index) as { n: number }
  ).n;

const insertPause = (database: Database.Database, pauseId: string, deadlineAt: number | null) =>
  database
    .prepare(
      `insert into agboss_pauses (tenant_id, pause_id, idempotency_key, thread_id, root_execution_id, execution_id,
        owner_id, status, is_sent, channel, answered_by, agent, ask, step, asked_at, next_deadline_at)
       values ('acme', ?, ?, 't-1', 'root-1', 'root-1', 'alice', 'pending', 0, 'approvals', 'thread-owner',
        'agent', '{}', '{}', 1, ?)`,
    )
    .run(pauseId, `key-${pauseId}`, deadlineAt);

describe("the deadline index holds only pauses with a deadline", () => {
  const dir = tempDir();
  afterAll(() => dir.dispose());

  test("a file from before the change upgrades: pauses without a deadline leave the index, the due one is still found through it", async () => {
    expect(MIGRATION).toBeGreaterThan(0);
    const path = dir.file("before.sqlite");
    const database = await olderFile(path, MIGRATION);
    insertPause(database, "no-deadline-1", null);
    insertPause(database, "no-deadline-2", null);
    insertPause(database, "due", 500);
    insertPause(database, "later", 5_000);
    // Before: every pause has an entry, with or without a deadline.
    expect(entries(database, "agboss_pauses_deadline_idx")).toBe(4);
    database.close();

    const store = await SqliteStore.open({ path });
    try {
      const due = await store.pauses.listDueDeadlines({ now: 1_000, limit: 10 });
      expect(due.map((p) => p.pauseId)).toEqual(["due"]);
      // A pause without a deadline, answered, still has no entry (pages-written.test.ts shows the
      // answer's commit writes no page of the index).
      await store.pauses.resolve(
        "acme",
        "no-deadline-1",
        { decision: { approved: true }, responder: "alice" },
        2,
      );
    } finally {
      await store.close();
    }
    const after = new Database(path, { readonly: true });
    try {
      expect(entries(after, "agboss_pauses_deadline_idx")).toBe(2);
      const partial = after.prepare("pragma index_list(agboss_pauses)").all() as {
        name: string;
        partial: number;
      }[];
      expect(partial.find((i) => i.name === "agboss_pauses_deadline_idx")?.partial).toBe(1);
      const plan = after
        .prepare(
          "explain query plan select * from agboss_pauses where status = 'pending' and next_deadline_at <= 1000 order by next_deadline_at, tenant_id, pause_id limit 10",
        )
        .all() as { detail: string }[];
      expect(plan.map((row) => row.detail).join("\n")).toMatch(/USING INDEX agboss_pauses_deadline_idx/);
    } finally {
      after.close();
    }
  });
});
