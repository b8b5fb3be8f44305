import { STORE_MIGRATIONS } from "@agboss/store-kysely";
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import { SqliteStore } from "../src/index.js";
import { olderFile } from "./older-file.js";
import { tempDir } from "./temp-dir.js";

const migration = (name: string) => STORE_MIGRATIONS.findIndex((m) => m.name === name);

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

/** Whether `index` is partial, and the plan of `query` on the file. */
const inspect = (database: Database.Database, index: string, query: string) => {
  const list = database.prepare("pragma index_list(agboss_pauses)").all() as {
    name: string;
    partial: number;
  }[];
  const plan = database.prepare(`explain query plan ${query}`).all() as { detail: string }[];
  return {
    partial: list.find((i) => i.name === index)?.partial,
    plan: plan.map((row) => row.detail).join("\n"),
  };
};

describe("the pause indexes that hold only the pauses their queries read", () => {
  const dir = tempDir();
  afterAll(() => dir.dispose());

  test("the deadline index: a file from before the change upgrades, pauses without a deadline leave it, the due one is still found through it", async () => {
    const before = migration("pauses-deadline-index-partial");
    expect(before).toBeGreaterThan(0);
    const path = dir.file("deadline.sqlite");
    const database = await olderFile(path, before);
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
      const { partial, plan } = inspect(
        after,
        "agboss_pauses_deadline_idx",
        "select * from agboss_pauses where status = 'pending' and next_deadline_at <= 1000 order by next_deadline_at, tenant_id, pause_id limit 10",
      );
      expect(partial).toBe(1);
      expect(plan).toMatch(/USING INDEX agboss_pauses_deadline_idx/);
    } finally {
      after.close();
    }
  });

  test("cancelled pauses' deadlines: the upgrade drops them from the deadline index; one an older instance leaves owes no withdrawal, and a cancel drops its pause's", async () => {
    const path = dir.file("cancelled-deadlines.sqlite");
    const database = await olderFile(path, "pauses-cancelled-deadlines-dropped");
    insertPause(database, "cancelled-before", 500);
    database.prepare("update agboss_pauses set status = 'cancelled', resolved_at = 2").run();
    expect(entries(database, "agboss_pauses_deadline_idx")).toBe(1);
    database.close();

    const store = await SqliteStore.open({ path });
    try {
      // As an instance of the older version writes it meanwhile (a rolling upgrade): cancelled, not
      // marked sent, a deadline kept with its reminder count.
      const writer = new Database(path);
      try {
        insertPause(writer, "cancelled-by-older", 600);
        writer
          .prepare(
            "update agboss_pauses set status = 'cancelled', resolved_at = 3, deadline_reminders = 2 where pause_id = ?",
          )
          .run("cancelled-by-older");
        insertPause(writer, "pending-with-deadline", 700);
      } finally {
        writer.close();
      }
      expect(await store.pauses.listOwedWithdrawals({ now: 10_000, limit: 10 })).toEqual([]);
      const older = await store.pauses.findByTenantIdAndPauseId("acme", "cancelled-by-older");
      expect(older).toMatchObject({ status: "cancelled", isSent: false });
      expect(older?.withdrawalOwedAt).toBeUndefined();
      expect(older?.deadline).toBeUndefined();

      const reader = new Database(path, { readonly: true });
      try {
        const deadlineOf = (pauseId: string) =>
          (
            reader.prepare("select next_deadline_at from agboss_pauses where pause_id = ?").get(pauseId) as {
              next_deadline_at: number | null;
            }
          ).next_deadline_at;
        expect(deadlineOf("cancelled-before")).toBeNull();
        await store.pauses.cancelByTenantIdAndPauseId("acme", "pending-with-deadline", {
          resolution: "cancelled",
          at: 4,
        });
        expect(deadlineOf("pending-with-deadline")).toBeNull();
      } finally {
        reader.close();
      }
    } finally {
      await store.close();
    }
  });

  test("the resolved index: a file from before the change upgrades, waiting pauses leave it, the sweep and retention still read it", async () => {
    const before = migration("pauses-resolved-index-partial");
    expect(before).toBeGreaterThan(0);
    const path = dir.file("resolved.sqlite");
    const database = await olderFile(path, before);
    for (const id of ["waiting-1", "waiting-2", "answered", "taken"]) insertPause(database, id, null);
    database
      .prepare("update agboss_pauses set status = 'resolved', resolved_at = 10 where pause_id = 'answered'")
      .run();
    database
      .prepare("update agboss_pauses set status = 'taken', resolved_at = 20 where pause_id = 'taken'")
      .run();
    // Before: the waiting pauses have entries too.
    expect(entries(database, "agboss_pauses_resolved_idx")).toBe(4);
    database.close();

    const store = await SqliteStore.open({ path });
    try {
      const answered = await store.pauses.listResolvedBefore({ before: 100, limit: 10 });
      expect(answered.map((p) => p.pauseId)).toEqual(["answered"]);
      // A waiting pause asked after the upgrade has no entry either; answered, it gets one.
      await store.pauses.findOrCreate({
        ...answered[0]!,
        pauseId: "waiting-3",
        idempotencyKey: "key-waiting-3",
        status: "pending",
        resolution: undefined,
        answer: undefined,
        resolvedAt: undefined,
      });
      await store.pauses.resolve(
        "acme",
        "waiting-1",
        { decision: { approved: true }, responder: "alice" },
        30,
      );
      expect(await store.pauses.deleteResolvedBefore(25)).toBe(1);
    } finally {
      await store.close();
    }
    const after = new Database(path, { readonly: true });
    try {
      // "answered" and "waiting-1"; "taken" went with retention, the two waiting pauses are not in it.
      expect(entries(after, "agboss_pauses_resolved_idx")).toBe(2);
      const { partial, plan } = inspect(
        after,
        "agboss_pauses_resolved_idx",
        "select * from agboss_pauses where status = 'resolved' and resolved_at < 100 order by resolved_at, tenant_id, pause_id limit 10",
      );
      expect(partial).toBe(1);
      expect(plan).toBe(
        "SEARCH agboss_pauses USING INDEX agboss_pauses_resolved_idx (status=? AND resolved_at<?)",
      );
    } finally {
      after.close();
    }
  });
});
