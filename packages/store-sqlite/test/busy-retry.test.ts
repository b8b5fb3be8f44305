import { randomUUID } from "node:crypto";
import { LeaseLostError, PauseStatus, StoreUnavailableError } from "@agboss/core";
import type { Fence, PauseRecord } from "@agboss/core/store";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { type SqliteHandle, SqliteStore, sqliteFaultOf } from "../src/index.js";
import { interceptStatement } from "./intercepted-handle.js";
import { pause, thread } from "./records.js";
import { tempDir } from "./temp-dir.js";

const dir = tempDir();
afterAll(() => dir.dispose());

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A store's handle that counts the write transactions it was asked to begin, refused ones too. */
function countingBegins(path: string): { handle: SqliteHandle; begins: () => number } {
  let begins = 0;
  const { handle, db } = interceptStatement(path, "begin immediate", () => {
    begins += 1;
  });
  cleanups.push(() => db.open && db.close());
  return { handle, begins: () => begins };
}

/**
 * A store on a fresh file whose busy wait is 0, so a lock held by another connection is met at once
 * and only the store's retries (which leave the thread free) wait for it; and a second connection on
 * the same file, as another process would hold it.
 */
async function openContended(retry: { attempts: number; baseDelayMs: number; maxDelayMs: number }) {
  const path = dir.file(`${randomUUID()}.sqlite`);
  const counting = countingBegins(path);
  const store = await SqliteStore.open({ database: counting.handle, busyTimeoutMs: 0, retry });
  cleanups.push(() => store.close());
  const other = new Database(path);
  cleanups.push(() => other.open && other.close());
  return { store, other, begins: counting.begins };
}

describe("SQLITE_BUSY from another connection", () => {
  test("writes the lock turns away are retried until the other connection lets go, then commit", async () => {
    const { store, other, begins } = await openContended({ attempts: 12, baseDelayMs: 10, maxDelayMs: 50 });
    const before = begins();
    other.exec("begin immediate");
    const started = Date.now();
    setTimeout(() => other.exec("commit"), 150);

    const results = await Promise.all([
      store.threads.save(thread("one")),
      store.pauses.findOrCreate(pause("p-1")),
      store.threads.save(thread("two")),
    ]);

    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    // Turned away at least once, then let in: the three queued writes share the transaction that got in.
    expect(begins() - before).toBeGreaterThan(1);
    expect(results[1].pauseId).toBe("p-1");
    expect(await store.threads.findByTenantIdAndThreadId("t", "one")).toBeDefined();
    expect(await store.threads.findByTenantIdAndThreadId("t", "two")).toBeDefined();
    expect((await store.pauses.findByTenantIdAndPauseId("t", "p-1"))?.status).toBe(PauseStatus.Pending);
  });

  test("a lock held past the retry budget fails with StoreUnavailableError, SQLite's error as its cause, and writes nothing", async () => {
    const { store, other, begins } = await openContended({ attempts: 3, baseDelayMs: 5, maxDelayMs: 10 });
    const before = begins();
    other.exec("begin immediate");

    const error = await store.threads.save(thread("blocked")).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).code).toBe("store.unavailable");
    expect((error as Error).message).toContain("3 times");
    expect((error as Error).message).toContain("SQLITE_BUSY");
    expect((error as Error).message).toContain("nothing was written");
    expect(((error as Error).cause as { code?: string }).code).toMatch(/^SQLITE_BUSY/);
    expect(begins() - before).toBe(3);

    other.exec("rollback");
    expect(await store.threads.findByTenantIdAndThreadId("t", "blocked")).toBeUndefined();
    await store.threads.save(thread("after"));
    expect(await store.threads.findByTenantIdAndThreadId("t", "after")).toBeDefined();
  });

  test("a superseded fenced write among retried ones fails with LeaseLostError, neither retried nor wrapped", async () => {
    const { store, other } = await openContended({ attempts: 12, baseDelayMs: 10, maxDelayMs: 50 });
    const stale = (await store.leases.acquire({ key: "tree", holder: "a", now: 0, ttlMs: 10 })) as Fence;
    const current = (await store.leases.acquire({ key: "tree", holder: "b", now: 20, ttlMs: 10 })) as Fence;
    other.exec("begin immediate");
    setTimeout(() => other.exec("commit"), 80);

    const results = await Promise.allSettled([
      store.threads.save(thread("one")),
      store.pauses.findOrCreate(pause("stale"), stale),
      store.pauses.findOrCreate(pause("current"), current),
    ]);

    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
    expect(await store.pauses.findByTenantIdAndPauseId("t", "stale")).toBeUndefined();
    expect(await store.pauses.findByTenantIdAndPauseId("t", "current")).toBeDefined();
    expect(await store.threads.findByTenantIdAndThreadId("t", "one")).toBeDefined();
  });

  test("a constraint violation is not retried: it reaches the caller as SQLite raised it", async () => {
    const { store, begins } = await openContended({ attempts: 5, baseDelayMs: 5, maxDelayMs: 10 });
    const before = begins();
    // A pause whose thread id is missing violates a NOT NULL constraint.
    const broken = { ...pause("broken"), threadId: null } as unknown as PauseRecord;
    const error = await store.pauses.findOrCreate(broken).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(StoreUnavailableError);
    expect((error as { code?: string }).code).toMatch(/^SQLITE_CONSTRAINT/);
    expect(begins() - before).toBe(1);
  });
});

describe("sqliteFaultOf", () => {
  test("names busy and locked, and nothing else, as transient", () => {
    const coded = (code: string) => Object.assign(new Error(code), { code });
    for (const code of ["SQLITE_BUSY", "SQLITE_BUSY_SNAPSHOT", "SQLITE_BUSY_RECOVERY", "SQLITE_LOCKED"]) {
      expect(sqliteFaultOf(coded(code))).toBe("contention");
    }
    for (const code of [
      "SQLITE_CONSTRAINT_PRIMARYKEY",
      "SQLITE_IOERR",
      "SQLITE_CORRUPT",
      "SQLITE_READONLY",
    ]) {
      expect(sqliteFaultOf(coded(code))).toBeUndefined();
    }
    expect(sqliteFaultOf(new Error("database is locked"))).toBeUndefined();
    expect(sqliteFaultOf(undefined)).toBeUndefined();
  });
});
