import { readdirSync, readFileSync, readlinkSync, renameSync, statSync } from "node:fs";
import { endianness } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { type Kysely, sql } from "kysely";
import { afterAll, describe, expect, test } from "vitest";
import { SqliteStore, SqliteWalCheckpoints } from "../src/index.js";
import { WalCheckpointer } from "../src/wal-checkpoints.js";
import { tempDir } from "./temp-dir.js";

const PAGE = 4096;
const RESTART_PAGES = 40;
/** Started at once, copying every 5 ms, the log started over from 40 pages. */
const QUICK = { startAfterMs: 0, intervalMs: 5, restartPages: RESTART_PAGES };

async function until(check: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !check(); waited += 5) {
    if (waited > 5_000) throw new Error(`timed out waiting until ${what}`);
    await sleep(5);
  }
}

const autocheckpoint = async (store: SqliteStore) =>
  (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(store.db)).rows[0]
    ?.wal_autocheckpoint;

/**
 * Commits `count` transactions of about two pages each, one right after the other: the log is never
 * idle long enough for a copy to catch up with it on its own.
 */
async function writePages(store: SqliteStore, count: number): Promise<void> {
  await sql`create table if not exists filler (id integer primary key, value blob)`.execute(store.db);
  for (let i = 0; i < count; i += 1) {
    await sql`insert into filler (value) values (${Buffer.alloc(PAGE, i % 251)})`.execute(store.db);
  }
}

/**
 * What the log's shared index says (SQLite's WAL-index format, native byte order): how many frames
 * the log holds (`mxFrame`, in the header) and how many of them were copied into the file
 * (`nBackfill`, right after the header's two copies).
 */
function walIndex(path: string): { frames: number; backfilled: number } {
  const index = readFileSync(`${path}-shm`);
  const u32 = (offset: number) =>
    endianness() === "LE" ? index.readUInt32LE(offset) : index.readUInt32BE(offset);
  return { frames: u32(16), backfilled: u32(96) };
}

/** Where `/proc/self/fd` tells which files the process holds open. */
const onLinux = process.platform === "linux";

/** The file descriptors this process holds on `file` (its log and shared memory included). */
function descriptorsOn(file: string): number {
  return readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(file);
    } catch {
      return false;
    }
  }).length;
}

describe("SqliteStore background WAL checkpoints", () => {
  const dir = tempDir("agboss-wal-");
  afterAll(() => dir.dispose());

  test("a file the store opens has its log copied on a thread of its own, not in its commits", async () => {
    // The store's connection would checkpoint only at 100,000 pages: what gets copied, the thread copied.
    const timing = { ...QUICK, restartPages: 100_000 };
    const path = dir.file("background.sqlite");
    const store = await SqliteStore.open({ path, walCheckpointTiming: timing });
    await until(() => store.walCheckpoints === SqliteWalCheckpoints.Background, "the thread is up");
    expect(await autocheckpoint(store)).toBe(100_000);
    await writePages(store, 200);
    // Where a copy caught up between two commits, the next one started the log over: what is in it
    // now is what was written since, all of it copied once the thread has had its next look.
    await until(() => walIndex(path).backfilled === walIndex(path).frames, "the thread caught up");
    expect(walIndex(path).frames).toBeGreaterThan(0);
    expect(store.walCheckpointFailure).toBeUndefined();
    await store.close();
    const reader = new Database(path, { readonly: true });
    expect(reader.prepare("select count(*) as n from filler").get()).toEqual({ n: 200 });
    reader.close();

    // The same writes inline: under SQLite's 1,000 pages, nothing is copied.
    const inlinePath = dir.file("inline-copies.sqlite");
    const inline = await SqliteStore.open({ path: inlinePath, walCheckpoints: SqliteWalCheckpoints.Inline });
    await writePages(inline, 200);
    await sleep(40);
    expect(walIndex(inlinePath)).toEqual({ frames: walIndex(inlinePath).frames, backfilled: 0 });
    expect(walIndex(inlinePath).frames).toBeGreaterThanOrEqual(400);
    await inline.close();
  });

  test("while commits go on, the log starts over at restartPages instead of growing", async () => {
    const path = dir.file("restarts.sqlite");
    const store = await SqliteStore.open({ path, walCheckpointTiming: QUICK });
    await until(() => store.walCheckpoints === SqliteWalCheckpoints.Background, "the thread is up");
    expect(await autocheckpoint(store)).toBe(RESTART_PAGES);
    await writePages(store, 3000);
    // About 6,000 pages went through a log that never grew far past 40 (SQLite alone: 1,000).
    const walPages = statSync(`${path}-wal`).size / PAGE;
    expect(walPages).toBeLessThan(RESTART_PAGES * 3);
    expect(walPages).toBeGreaterThan(0);
    await store.close();
  });

  test("closing the store stops the thread and closes its connection", async () => {
    const path = dir.file("closing.sqlite");
    const store = await SqliteStore.open({ path, walCheckpointTiming: QUICK });
    await until(() => store.walCheckpoints === SqliteWalCheckpoints.Background, "the thread is up");
    await writePages(store, 20);
    // The store's connection and the thread's each hold the file, its log and its shared memory.
    if (onLinux) expect(descriptorsOn(path)).toBeGreaterThanOrEqual(4);
    await store.close();
    expect(store.walCheckpoints).toBe(SqliteWalCheckpoints.Inline);
    if (onLinux) expect(descriptorsOn(path)).toBe(0);
  });

  test("a store closed before its thread starts never starts one", async () => {
    const path = dir.file("short.sqlite");
    const store = await SqliteStore.open({ path, walCheckpointTiming: { ...QUICK, startAfterMs: 30 } });
    await store.close();
    await sleep(200);
    expect(store.walCheckpoints).toBe(SqliteWalCheckpoints.Inline);
    if (onLinux) expect(descriptorsOn(path)).toBe(0);
  });

  test("when the thread cannot open the file, the store's commits checkpoint inline again", async () => {
    const path = dir.file("moved.sqlite");
    const store = await SqliteStore.open({ path, walCheckpointTiming: { ...QUICK, startAfterMs: 20 } });
    // Moved before the thread opens it: the store's connection goes on with the file it has open.
    renameSync(path, dir.file("moved-away.sqlite"));
    await until(() => store.walCheckpointFailure !== undefined, "the thread reports its failure");
    expect(store.walCheckpointFailure).toMatch(/unable to open|does not exist|no such file/i);
    expect(store.walCheckpoints).toBe(SqliteWalCheckpoints.Inline);
    expect(await autocheckpoint(store)).toBe(1000);
    await writePages(store, 5);
    await store.close();
  });

  test("when the thread dies, the connection checkpoints inline again", async () => {
    const path = dir.file("thread-dies.sqlite");
    await (await SqliteStore.open({ path, walCheckpoints: SqliteWalCheckpoints.Inline })).close();
    const handle = new Database(path);
    const checkpointer = new WalCheckpointer(handle, path, "FULL", QUICK);
    await until(() => checkpointer.mode === SqliteWalCheckpoints.Background, "the thread is up");
    expect(handle.pragma("wal_autocheckpoint", { simple: true })).toBe(RESTART_PAGES);
    await checkpointer.killThread();
    await until(() => checkpointer.mode === SqliteWalCheckpoints.Inline, "the store notices");
    expect(handle.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
    expect(checkpointer.failure).toBe("the checkpoint thread exited");
    await checkpointer.stop();
    handle.close();
  });

  test("a connection busy streaming rows when the thread comes up gets its threshold once it is free", async () => {
    const path = dir.file("streaming.sqlite");
    const store = await SqliteStore.open({ path, walCheckpointTiming: { ...QUICK, startAfterMs: 20 } });
    await writePages(store, 6);
    // The rows come one at a time, the statement open on the store's connection all the while: the
    // thread comes up meanwhile, and its threshold cannot be set then.
    const db = store.db as unknown as Kysely<{ filler: { id: number } }>;
    let streamed = 0;
    for await (const _row of db.selectFrom("filler").select("id").stream(1)) {
      streamed += 1;
      await sleep(50);
    }
    expect(streamed).toBe(6);
    expect(store.walCheckpoints).toBe(SqliteWalCheckpoints.Background);
    await sleep(50);
    expect(await autocheckpoint(store)).toBe(RESTART_PAGES);
    await store.close();
  });

  test("inline on request, for a handle passed in, and in memory: no thread, SQLite's own checkpoints", async () => {
    const inline = await SqliteStore.open({
      path: dir.file("inline.sqlite"),
      walCheckpoints: SqliteWalCheckpoints.Inline,
      walCheckpointTiming: QUICK,
    });
    const handle = new Database(dir.file("handle.sqlite"));
    const passedIn = await SqliteStore.open({ database: handle, walCheckpointTiming: QUICK });
    const memory = await SqliteStore.open({ path: ":memory:", walCheckpointTiming: QUICK });
    await sleep(40);
    for (const store of [inline, passedIn, memory]) {
      expect(store.walCheckpoints).toBe(SqliteWalCheckpoints.Inline);
      expect(await autocheckpoint(store)).toBe(1000);
      await store.close();
    }
    if (onLinux) expect(descriptorsOn(dir.file("inline.sqlite"))).toBe(0);
    handle.close();
  });

  test("refuses a walCheckpoints value it does not know, before opening anything", async () => {
    await expect(
      SqliteStore.open({
        path: dir.file("never.sqlite"),
        walCheckpoints: "sometimes" as SqliteWalCheckpoints,
      }),
    ).rejects.toThrow('walCheckpoints must be "background" or "inline", not "sometimes".');
    expect(readdirSync(dir.path)).not.toContain("never.sqlite");
  });
});
