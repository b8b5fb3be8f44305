import { STORE_MIGRATIONS } from "@agboss/store-kysely";
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import { SqliteStore } from "../src/index.js";
import { olderFile } from "./older-file.js";
import { tempDir } from "./temp-dir.js";

const MIGRATION = STORE_MIGRATIONS.findIndex((m) => m.name === "leases-threads-without-rowid");

const tableSql = (database: Database.Database, table: string) =>
  (
    database.prepare("select sql from sqlite_master where type = 'table' and name = ?").get(table) as {
      sql: string;
    }
  ).sql;
/** The indexes SQLite made for `table` itself (a rowid table's primary key gets one). */
const autoIndexes = (database: Database.Database, table: string) =>
  (
    database
      .prepare(
        "select name from sqlite_master where type = 'index' and tbl_name = ? and name like 'sqlite_autoindex%'",
      )
      .all(table) as { name: string }[]
  ).map((r) => r.name);

describe("leases and threads without rowid", () => {
  const dir = tempDir();
  afterAll(() => dir.dispose());

  test("a file from before the migration upgrades: its leases and threads stay, each key kept once", async () => {
    expect(MIGRATION).toBeGreaterThan(0);
    const path = dir.file("before.sqlite");
    const database = await olderFile(path, MIGRATION);
    database
      .prepare("insert into agboss_leases (key, holder, epoch, expires_at) values ('acme/t-1', 'h', 7, 1000)")
      .run();
    database
      .prepare(
        `insert into agboss_threads (tenant_id, thread_id, owner_id, workflow_name, latest_execution_id, created_at, updated_at)
         values ('acme', 't-1', 'alice', 'refunds', 'e-1', 1, 2)`,
      )
      .run();
    expect(autoIndexes(database, "agboss_leases")).toHaveLength(1);
    expect(autoIndexes(database, "agboss_threads")).toHaveLength(1);
    database.close();

    const store = await SqliteStore.open({ path });
    try {
      expect(await store.leases.find("acme/t-1")).toEqual({
        key: "acme/t-1",
        holder: "h",
        epoch: 7,
        expiresAt: 1000,
      });
      expect(await store.threads.findByTenantIdAndThreadId("acme", "t-1")).toEqual({
        tenantId: "acme",
        threadId: "t-1",
        ownerId: "alice",
        workflowName: "refunds",
        latestExecutionId: "e-1",
        createdAt: 1,
        updatedAt: 2,
      });
      // The keys still decide: a second lease on the key is a new grant of the same row, not a second row.
      const next = await store.leases.acquire({ key: "acme/t-1", holder: "h2", now: 2000, ttlMs: 10 });
      expect(next?.epoch).toBe(8);
      await store.threads.save({
        tenantId: "acme",
        threadId: "t-1",
        ownerId: "alice",
        workflowName: "refunds",
        latestExecutionId: "e-2",
        createdAt: 1,
        updatedAt: 3,
      });
      expect((await store.threads.findByTenantIdAndThreadId("acme", "t-1"))?.latestExecutionId).toBe("e-2");
    } finally {
      await store.close();
    }
    const after = new Database(path, { readonly: true });
    try {
      for (const table of ["agboss_leases", "agboss_threads"]) {
        expect(tableSql(after, table)).toMatch(/without rowid\s*$/i);
        expect(autoIndexes(after, table)).toEqual([]);
      }
      expect(after.prepare("select count(*) as n from agboss_leases").get()).toEqual({ n: 1 });
      expect(after.prepare("select count(*) as n from agboss_threads").get()).toEqual({ n: 1 });
    } finally {
      after.close();
    }
  });
});
