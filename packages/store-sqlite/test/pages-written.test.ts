import { readFileSync } from "node:fs";
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import { SqliteStore } from "../src/index.js";
import { execution, pause } from "./records.js";
import { tempDir } from "./temp-dir.js";

/**
 * The tables and indexes whose pages `run` wrote: the write-ahead log is emptied first and kept from
 * being copied back meanwhile, then each of its frames is matched to the b-tree its page belongs to.
 */
async function pagesWritten(database: Database.Database, run: () => Promise<void>): Promise<Set<string>> {
  database.pragma("wal_autocheckpoint = 0");
  database.pragma("wal_checkpoint(TRUNCATE)");
  await run();
  const wal = readFileSync(`${database.name}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const owners = new Map(
    (database.prepare("select name, pageno from dbstat").all() as { name: string; pageno: number }[]).map(
      (row) => [row.pageno, row.name],
    ),
  );
  const written = new Set<string>();
  for (let offset = 32; offset + 24 + pageSize <= wal.length; offset += 24 + pageSize) {
    written.add(owners.get(wal.readUInt32BE(offset)) ?? "(other)");
  }
  return written;
}

describe("pages a write leaves alone", () => {
  const dir = tempDir();
  afterAll(() => dir.dispose());

  test("saving an execution again does not rewrite its entry in the thread index (its thread and start never change)", async () => {
    const database = new Database(dir.file("executions.sqlite"));
    const store = await SqliteStore.open({ database });
    try {
      await store.executions.save(execution("e-1"));
      const written = await pagesWritten(database, () =>
        store.executions.save({ ...execution("e-1"), status: "paused", updatedAt: 2 }),
      );
      // The status index moves, as it must; the thread index is not touched.
      expect(written).toContain("agboss_executions_status_order_idx");
      expect(written).not.toContain("agboss_executions_thread_idx");
      expect((await store.executions.findByTenantIdAndExecutionId("t", "e-1"))?.status).toBe("paused");
    } finally {
      await store.close();
      database.close();
    }
  });

  test("asking a pause writes no page of the resolved index (it holds only pauses with an answer's time)", async () => {
    const database = new Database(dir.file("asked.sqlite"));
    const store = await SqliteStore.open({ database });
    try {
      const written = await pagesWritten(database, async () => {
        await store.pauses.findOrCreate(pause("p-1"));
      });
      expect(written).toContain("agboss_pauses_inbox_idx");
      expect(written).not.toContain("agboss_pauses_resolved_idx");
      // Answered, it has an entry: the answer's commit writes the index.
      const answered = await pagesWritten(database, async () => {
        await store.pauses.resolve("t", "p-1", { decision: { approved: true }, responder: "o" }, 2);
      });
      expect(answered).toContain("agboss_pauses_resolved_idx");
    } finally {
      await store.close();
      database.close();
    }
  });

  test("answering a pause without a deadline does not touch the deadline index", async () => {
    const database = new Database(dir.file("pauses.sqlite"));
    const store = await SqliteStore.open({ database });
    try {
      await store.pauses.findOrCreate(pause("p-1"));
      const written = await pagesWritten(database, async () => {
        await store.pauses.resolve("t", "p-1", { decision: { approved: true }, responder: "o" }, 2);
      });
      expect(written).toContain("agboss_pauses_inbox_idx");
      expect(written).not.toContain("agboss_pauses_deadline_idx");
    } finally {
      await store.close();
      database.close();
    }
  });
});
