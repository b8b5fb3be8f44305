import { randomUUID } from "node:crypto";
import { LeaseLostError } from "@agboss/core";
import type { Fence } from "@agboss/core/store";
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import { type SqliteHandle, SqliteStore } from "../src/index.js";
import { pause, thread } from "./records.js";
import { tempDir } from "./temp-dir.js";

const dir = tempDir();
afterAll(() => dir.dispose());

/** A better-sqlite3 handle that counts the commits run through it. */
function countingCommits(path: string): { handle: SqliteHandle; commits: () => number; close(): void } {
  const db = new Database(path);
  let commits = 0;
  const handle = {
    name: db.name,
    pragma: (source: string, options?: { simple?: boolean }) => db.pragma(source, options),
    close: () => db.close(),
    prepare: (sql: string) => {
      const statement = db.prepare(sql);
      if (sql.trim().toLowerCase() !== "commit") return statement;
      return {
        reader: statement.reader,
        all: (parameters: readonly unknown[]) => statement.all(...parameters),
        run: (parameters: readonly unknown[]) => {
          commits += 1;
          return statement.run(...parameters);
        },
      };
    },
  } as unknown as SqliteHandle;
  return { handle, commits: () => commits, close: () => db.close() };
}

async function openWithTakeover() {
  const counting = countingCommits(dir.file(`${randomUUID()}.sqlite`));
  const store = await SqliteStore.open({ database: counting.handle });
  const stale = (await store.leases.acquire({ key: "tree", holder: "a", now: 0, ttlMs: 10 })) as Fence;
  const current = (await store.leases.acquire({ key: "tree", holder: "b", now: 20, ttlMs: 10 })) as Fence;
  const close = async () => {
    await store.close();
    counting.close();
  };
  return { store, stale, current, commits: counting.commits, close };
}

describe("group commit", () => {
  test("writes queued together share one commit; a superseded one rolls back alone", async () => {
    const { store, stale, current, commits, close } = await openWithTakeover();
    const before = commits();
    const results = await Promise.allSettled([
      store.threads.save(thread("one")),
      store.pauses.findOrCreate(pause("stale"), stale),
      store.pauses.findOrCreate(pause("current"), current),
      store.threads.save(thread("two")),
    ]);
    expect(commits() - before).toBe(1);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
    expect(await store.pauses.findByTenantIdAndPauseId("t", "stale")).toBeUndefined();
    expect((await store.pauses.findByTenantIdAndPauseId("t", "current"))?.pauseId).toBe("current");
    expect(await store.threads.findByTenantIdAndThreadId("t", "one")).toBeDefined();
    expect(await store.threads.findByTenantIdAndThreadId("t", "two")).toBeDefined();
    await close();
  });

  test("a first unit that fails rolls back without taking the queued ones with it", async () => {
    const { store, stale, current, close } = await openWithTakeover();
    const results = await Promise.allSettled([
      store.pauses.findOrCreate(pause("stale"), stale),
      store.pauses.findOrCreate(pause("current"), current),
      store.threads.save(thread("one")),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "fulfilled", "fulfilled"]);
    expect(await store.pauses.findByTenantIdAndPauseId("t", "stale")).toBeUndefined();
    expect(await store.pauses.findByTenantIdAndPauseId("t", "current")).toBeDefined();
    expect(await store.threads.findByTenantIdAndThreadId("t", "one")).toBeDefined();
    await close();
  });

  test("a write resolves only after its commit, and a later write starts a new transaction", async () => {
    const { store, current, commits, close } = await openWithTakeover();
    const before = commits();
    await store.pauses.findOrCreate(pause("first"), current);
    expect(commits() - before).toBe(1);
    await store.threads.save(thread("later"));
    expect(commits() - before).toBe(2);
    await close();
  });
});
