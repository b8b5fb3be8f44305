import { existsSync } from "node:fs";
import { PauseStatus } from "@agboss/core";
import { STORE_MIGRATIONS } from "@agboss/store-kysely";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { SQLITE_PATH_ENV, SqliteStore, SqliteSynchronous, sqliteStore } from "../src/index.js";
import { tempDir } from "./temp-dir.js";

const pragma = (store: SqliteStore, name: string) => {
  const db = new Database(store.path, { readonly: true });
  try {
    return db.pragma(name, { simple: true });
  } finally {
    db.close();
  }
};

describe("SqliteStore", () => {
  const dir = tempDir();
  afterAll(() => dir.dispose());
  afterEach(() => {
    delete process.env[SQLITE_PATH_ENV];
  });

  test("opens in WAL mode with synchronous=FULL by default and NORMAL on request", async () => {
    const full = await SqliteStore.open({ path: dir.file("full.sqlite") });
    const sync = await full.db.selectNoFrom((eb) => eb.val(1).as("one")).execute();
    expect(sync).toEqual([{ one: 1 }]);
    expect(pragma(full, "journal_mode")).toBe("wal");
    expect(full.name).toBe(`sqlite:${dir.file("full.sqlite")}`);
    await full.close();

    const handle = new Database(dir.file("normal.sqlite"));
    const normal = await SqliteStore.open({
      database: handle,
      synchronous: SqliteSynchronous.Normal,
      busyTimeoutMs: 1234,
    });
    expect(handle.pragma("synchronous", { simple: true })).toBe(1);
    // SQLite's blocking busy wait is split over the 5 retry attempts: ceil(1234 / 5).
    expect(handle.pragma("busy_timeout", { simple: true })).toBe(247);
    expect(handle.pragma("foreign_keys", { simple: true })).toBe(1);
    await normal.close();
    expect(handle.open).toBe(true);
    handle.close();

    const defaults = new Database(dir.file("defaults.sqlite"));
    await (await SqliteStore.open({ database: defaults })).close();
    expect(defaults.pragma("synchronous", { simple: true })).toBe(2);
    expect(defaults.pragma("busy_timeout", { simple: true })).toBe(1000);
    defaults.close();
  });

  test("reads its path from AGBOSS_SQLITE_PATH and creates the directory", async () => {
    const path = dir.file("nested/deeper/env.sqlite");
    process.env[SQLITE_PATH_ENV] = path;
    const store = await sqliteStore()({
      appName: "refunds",
      clock: { now: () => 0, setTimer: () => ({ cancel() {} }) },
      logger: { log() {} },
    });
    expect(store.name).toBe(`sqlite:${path}`);
    await store.close();
    expect(existsSync(path)).toBe(true);
  });

  test("keeps everything across a close and reopen, migrating once", async () => {
    const path = dir.file("reopen.sqlite");
    const first = await SqliteStore.open({ path });
    const lease = await first.leases.acquire({ key: "tree", holder: "a", now: 0, ttlMs: 10 });
    await first.pauses.findOrCreate(
      {
        tenantId: "t",
        pauseId: "p",
        idempotencyKey: "k",
        threadId: "th",
        rootExecutionId: "r",
        executionId: "r",
        ownerId: "o",
        status: PauseStatus.Pending,
        resolution: undefined,
        isSent: false,
        channel: "c",
        answeredBy: "thread-owner",
        agent: "a",
        ask: { amount: 1 } as never,
        step: {} as never,
        answer: undefined,
        askedAt: 1,
        resolvedAt: undefined,
      },
      lease,
    );
    await first.close();
    await first.close();

    const second = await SqliteStore.open({ path });
    expect((await second.pauses.findByTenantIdAndPauseId("t", "p"))?.ask).toEqual({ amount: 1 });
    expect((await second.leases.find("tree"))?.epoch).toBe(lease?.epoch);
    const migrations = await second.db
      .selectFrom("agboss_migration" as never)
      .selectAll()
      .execute();
    expect(migrations).toHaveLength(STORE_MIGRATIONS.length);
    await second.close();
  });
});
