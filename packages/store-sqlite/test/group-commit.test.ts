import { AsyncResource } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { ExecutionStatus, LeaseLostError, StoreUnavailableError } from "@agboss/core";
import {
  CHECKPOINT_HISTORY_CONFIG_KEY,
  FENCE_CONFIG_KEY,
  type Fence,
  KEEP_READ_CONFIG_KEY,
  KEPT_READ_CONFIG_KEY,
} from "@agboss/core/store";
import { type AgbossDatabase, KyselyStore, TURN_AT_LEAST_EVERY_MS } from "@agboss/store-kysely";
import Database from "better-sqlite3";
import { Kysely, type SqliteDatabase, SqliteDialect } from "kysely";
import { afterAll, describe, expect, test } from "vitest";
import { cacheStatements } from "../src/cache-statements.js";
import { type SqliteHandle, SqliteStore } from "../src/index.js";
import { SQLITE_CAPABILITIES } from "../src/sqlite-capabilities.js";
import { syncStatementsOf } from "../src/sync-statements.js";
import { interceptStatement } from "./intercepted-handle.js";
import { execution, pause, thread } from "./records.js";
import { tempDir } from "./temp-dir.js";

const dir = tempDir();

/** A promise and the function that resolves it, for a test to hold a step until it lets it go. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
afterAll(() => dir.dispose());

/**
 * A store's handle that counts the commits run through it, and can refuse the next one (as a full or
 * failing disk would), leaving the transaction open for the store to roll back.
 */
function countingCommits(path: string): {
  handle: SqliteHandle;
  commits: () => number;
  /** The next commit fails with `code` (default `SQLITE_IOERR`); the transaction stays open. */
  refuseNextCommit(code?: string): void;
  close(): void;
} {
  let commits = 0;
  let refuse: string | undefined;
  const { handle, db } = interceptStatement(path, "commit", () => {
    if (refuse !== undefined) {
      const code = refuse;
      refuse = undefined;
      throw Object.assign(new Error(`commit refused (${code})`), { code });
    }
    commits += 1;
  });
  return {
    handle,
    commits: () => commits,
    refuseNextCommit: (code = "SQLITE_IOERR") => {
      refuse = code;
    },
    close: () => db.close(),
  };
}

async function openWithTakeover(path = dir.file(`${randomUUID()}.sqlite`)) {
  const counting = countingCommits(path);
  const store = await SqliteStore.open({ database: counting.handle });
  const stale = (await store.leases.acquire({ key: "tree", holder: "a", now: 0, ttlMs: 10 })) as Fence;
  const current = (await store.leases.acquire({ key: "tree", holder: "b", now: 20, ttlMs: 10 })) as Fence;
  const close = async () => {
    await store.close();
    counting.close();
  };
  return {
    store,
    stale,
    current,
    commits: counting.commits,
    refuseNextCommit: counting.refuseNextCommit,
    close,
  };
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

  test("while writes come from promise jobs alone, the event loop still turns: a timer due meanwhile runs before the writes end", async () => {
    const { store, close } = await openWithTakeover();
    let fired = false;
    const timer = setTimeout(() => {
      fired = true;
    }, 0);
    // A pass that never does I/O: each step works a little, then writes and waits for the write. Each
    // transaction turns the loop before its commit, so timers (a lease's heartbeat) and I/O still run.
    let firedBefore: number | undefined;
    for (let i = 0; i < 200 && firedBefore === undefined; i += 1) {
      const until = performance.now() + 0.5;
      while (performance.now() < until) {}
      await store.threads.save(thread(`step-${i}`));
      if (fired) firedBefore = i;
    }
    clearTimeout(timer);
    expect(firedBefore).toBeDefined();
    expect(firedBefore).toBeLessThan(150);
    await close();
  });

  test("a write issued in a later turn of the event loop joins the open transaction when the loop is due a turn, and then while turns find writes side by side", async () => {
    const { store, commits, close } = await openWithTakeover();
    // The lease grants above turned the loop and found nothing beside them; after a while without a
    // turn, the next transaction turns it again.
    await new Promise((resolve) => setTimeout(resolve, TURN_AT_LEAST_EVERY_MS + 5));
    const pair = async (name: string) => {
      const before = commits();
      const first = store.threads.save(thread(`${name}-first`));
      // Issued from a later turn, as a request handled beside a running execution writes.
      const second = await new Promise<Promise<unknown>>((resolve) =>
        setImmediate(() => resolve(store.threads.save(thread(`${name}-second`)))),
      );
      await Promise.all([first, second]);
      return commits() - before;
    };
    expect(await pair("due")).toBe(1);
    // That turn found a write: the next transaction turns the loop at once, and takes the next one in.
    expect(await pair("side-by-side")).toBe(1);
    for (const name of ["due-first", "due-second", "side-by-side-first", "side-by-side-second"]) {
      expect(await store.threads.findByTenantIdAndThreadId("t", name)).toBeDefined();
    }
    await close();
  });

  test("once a look found no write beside its own, writes whose callers wait for their commit commit without turning the event loop, but for a look every 10 ms", async () => {
    const { store, commits, close } = await openWithTakeover();
    await store.threads.save(thread("alone"));
    // Counts the loop's turns: each runs the immediates queued before it.
    let turns = 0;
    let counter = setImmediate(function count() {
      turns += 1;
      counter = setImmediate(count);
    });
    const before = commits();
    const started = performance.now();
    for (let i = 0; i < 20; i += 1) await store.threads.save(thread(`at-once-${i}`));
    const elapsedMs = performance.now() - started;
    clearImmediate(counter);
    expect(commits() - before).toBe(20);
    // Twenty turns when each commit turned the loop; here at most the looks that time allowed for.
    expect(turns).toBeLessThanOrEqual(1 + Math.floor(elapsedMs / TURN_AT_LEAST_EVERY_MS));
    await close();
  });

  test("turns for a caller that went on do not put off the look for writes side by side: after 10 ms of them, a write issued in a later turn joins the next commit", async () => {
    const { store, current, commits, close } = await openWithTakeover();
    await store.pauses.findOrCreate(pause("asked"), current);
    // A look that finds nothing beside this write: the next commits look again only in 10 ms.
    await store.threads.save(thread("alone"));
    // For 25 ms, a pass's sent marks, which resolve once applied: each of their commits turns the loop
    // for the pass, and finds nothing.
    const until = performance.now() + 2.5 * TURN_AT_LEAST_EVERY_MS;
    while (performance.now() < until) await store.pauses.markSent("t", "asked", current);
    // Waits for the last mark's commit (this write joins it, taken in by its turn for the pass).
    await store.threads.save(thread("with-the-last-mark"));
    const before = commits();
    const first = store.threads.save(thread("first"));
    const second = await new Promise<Promise<unknown>>((resolve) =>
      setImmediate(() => resolve(store.threads.save(thread("second")))),
    );
    await Promise.all([first, second]);
    expect(commits() - before).toBe(1);
    await close();
  });

  test("close() waits for a write in flight: it commits before the database closes", async () => {
    const path = dir.file(`${randomUUID()}.sqlite`);
    const store = await SqliteStore.open({ path });
    const saving = store.threads.save(thread("in-flight"));
    await store.close();
    await expect(saving).resolves.toBeUndefined();
    const reopened = await SqliteStore.open({ path });
    expect(await reopened.threads.findByTenantIdAndThreadId("t", "in-flight")).toBeDefined();
    await reopened.close();
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

/**
 * A store on a SQLite file whose synchronous runner notes the first three words of each statement it
 * runs (from after its migration on).
 */
async function openTracingStatements() {
  const database = new Database(dir.file(`${randomUUID()}.sqlite`));
  database.pragma("journal_mode = WAL");
  const statements = cacheStatements(database as unknown as SqliteDatabase);
  const db = new Kysely<AgbossDatabase>({ dialect: new SqliteDialect({ database: statements }) });
  const direct = syncStatementsOf(statements);
  const ran: string[] = [];
  const store = new KyselyStore({
    db,
    capabilities: SQLITE_CAPABILITIES,
    name: "sqlite:sync-statements",
    syncStatements: (sql, parameters) => {
      ran.push(sql.trim().split(/\s+/).slice(0, 3).join(" ").toLowerCase());
      return direct(sql, parameters);
    },
    syncIdle: () => database.inTransaction === false,
  });
  await store.migrate();
  ran.splice(0);
  return { store, db, ran };
}

describe("SqliteStore.open", () => {
  test("reads at once: a read does not wait for kysely's connection while no transaction is open on it", async () => {
    const store = await SqliteStore.open({ path: dir.file(`${randomUUID()}.sqlite`) });
    await store.threads.save(thread("at-once"));
    const { promise: gate, resolve: release } = signal();
    const { promise: held, resolve: holding } = signal();
    // kysely's one connection taken, no transaction begun on it.
    const holder = store.db.connection().execute(async () => {
      holding();
      await gate;
    });
    await held;
    const read = await store.threads.findByTenantIdAndThreadId("t", "at-once");
    expect(read?.threadId).toBe("at-once");
    release();
    await holder;
    await store.close();
  });
});

describe("a checkpoint read kept for the next one", () => {
  test("spares that read its statements, once: the read after it reads again", async () => {
    const { store, db, ran } = await openTracingStatements();
    const config = { configurable: { thread_id: "kept", checkpoint_ns: "" } };
    const checkpoint = {
      v: 4,
      id: "00000000-0000-6000-8000-000000000001",
      ts: new Date(0).toISOString(),
      channel_values: { messages: ["hi"] },
      channel_versions: { messages: 1 },
      versions_seen: {},
    };
    await store.checkpointer.put(
      config,
      checkpoint,
      { source: "input", step: -1, parents: {} },
      { messages: 1 },
    );
    ran.splice(0);
    const read = await store.checkpointer.getTuple({
      configurable: { ...config.configurable, [KEEP_READ_CONFIG_KEY]: "token-1" },
    });
    expect(ran.length).toBeGreaterThan(0);
    ran.splice(0);
    const kept = { configurable: { ...config.configurable, [KEPT_READ_CONFIG_KEY]: "token-1" } };
    expect(await store.checkpointer.getTuple(kept)).toEqual(read);
    expect(ran).toEqual([]);
    expect(await store.checkpointer.getTuple(kept)).toEqual(read);
    expect(ran.length).toBeGreaterThan(0);
    await db.destroy();
  });
});

describe("statements of a write transaction", () => {
  test("run at once through the store's synchronous runner on the connection it holds; reads outside one run at once too, and wait for one that holds it", async () => {
    const { store, db, ran } = await openTracingStatements();
    await store.threads.save(thread("one"));
    expect(ran[0]).toBe("begin immediate");
    expect(ran).toContain('insert into "agboss_threads"');
    expect(ran.at(-1)).toBe("commit");
    ran.splice(0);
    // No transaction holds the connection: the read runs at once, on the same runner.
    expect((await store.threads.findByTenantIdAndThreadId("t", "one"))?.threadId).toBe("one");
    expect(ran).toEqual(["select * from"]);
    ran.splice(0);

    // A unit of work holds it: a read from outside the unit goes through kysely, waits for the commit,
    // and never sees the unit's writes before they are committed.
    const { promise: gate, resolve: release } = signal();
    const { promise: inside, resolve: entered } = signal();
    const unit = store.atomically(async () => {
      await store.threads.save(thread("two"));
      entered();
      await gate;
    });
    await inside;
    let read: unknown = "pending";
    const reading = store.threads.findByTenantIdAndThreadId("t", "two").then((found) => {
      read = found?.threadId;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(read).toBe("pending");
    release();
    await unit;
    await reading;
    expect(read).toBe("two");
    expect(ran.filter((sql) => sql === "select * from")).toEqual([]);

    // A transaction opened on the store's database by other code: the same.
    const { promise: otherGate, resolve: releaseOther } = signal();
    const { promise: inserted, resolve: insertedOther } = signal();
    const other = db.transaction().execute(async (trx) => {
      await trx
        .insertInto("agboss_threads")
        .values({
          tenant_id: "t",
          thread_id: "three",
          owner_id: "o",
          workflow_name: "w",
          latest_execution_id: "e",
          created_at: 0,
          updated_at: 0,
        })
        .execute();
      insertedOther();
      await otherGate;
      throw new Error("rolled back");
    });
    await inserted;
    let third: unknown = "pending";
    const readingThird = store.threads.findByTenantIdAndThreadId("t", "three").then((found) => {
      third = found?.threadId ?? "none";
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(third).toBe("pending");
    releaseOther();
    await expect(other).rejects.toThrow("rolled back");
    await readingThird;
    expect(third).toBe("none");
    await db.destroy();
  });
});

/** A checkpoint with one channel, numbered `n` (ids sort by `n`). */
function checkpointNumbered(n: number) {
  return {
    v: 4,
    id: `00000000-0000-6000-8000-${String(n).padStart(12, "0")}`,
    ts: new Date(n).toISOString(),
    channel_values: { messages: [`m${n}`] },
    channel_versions: { messages: n },
    versions_seen: {},
  };
}

/** A pass's checkpoint config for `thread`: the fence under which it writes. */
function passConfig(threadId: string, fence: Fence, checkpointId?: string) {
  return {
    configurable: {
      thread_id: threadId,
      checkpoint_ns: "",
      [FENCE_CONFIG_KEY]: { key: fence.key, epoch: fence.epoch },
      ...(checkpointId === undefined ? {} : { checkpoint_id: checkpointId }),
    },
  };
}

const METADATA = { source: "loop" as const, step: 1, parents: {} };

describe("a pass's checkpoint writes", () => {
  test("a lease confirmed before a tool: with nothing of the pass waiting it is a read and commits nothing; with a checkpoint held back or uncommitted it answers false, and the renewal that follows commits it", async () => {
    const path = dir.file(`${randomUUID()}.sqlite`);
    const { store, stale, current, commits, close } = await openWithTakeover(path);
    const before = commits();
    expect(await store.leases.confirm(current, 25)).toBe(true);
    expect(await store.leases.confirm(stale, 25)).toBe(false);
    // Lapsed (the lease was granted until 30).
    expect(await store.leases.confirm(current, 30)).toBe(false);
    expect(commits() - before).toBe(0);

    // A checkpoint the pass put waits in memory: no answer without a write. It is sent on its way, and
    // until its commit ends the check still says no.
    await store.checkpointer.put(passConfig("tree", current), checkpointNumbered(1), METADATA, {
      messages: 1,
    });
    expect(await store.leases.confirm(current, 25)).toBe(false);
    expect(await store.leases.confirm(current, 25)).toBe(false);
    // The renewal the runtime makes then commits it, and after that the check is a read again.
    expect(await store.leases.renew({ fence: current, now: 25, ttlMs: 10 })).toBe(true);
    expect(commits() - before).toBe(1);
    const reader = new Database(path, { readonly: true });
    try {
      expect(reader.prepare("select checkpoint_id from agboss_checkpoints").all()).toEqual([
        { checkpoint_id: checkpointNumbered(1).id },
      ]);
    } finally {
      reader.close();
    }
    expect(await store.leases.confirm(current, 25)).toBe(true);
    expect(commits() - before).toBe(1);
    await close();
  });

  test("stored for a read, or before a lease's release, a held checkpoint's commit takes in what that caller writes next", async () => {
    const path = dir.file(`${randomUUID()}.sqlite`);
    const { store, current, commits, close } = await openWithTakeover(path);
    // As a pass keeps only its thread's latest checkpoint (the runtime's setting).
    const latestOnly = (config: ReturnType<typeof passConfig>) => ({
      configurable: { ...config.configurable, [CHECKPOINT_HISTORY_CONFIG_KEY]: "latest" },
    });
    // Writes that wait for their commits, with nobody writing beside them: the next commits turn the
    // loop only for a caller that went on.
    await store.threads.save(thread("x"));
    await store.threads.save(thread("y"));
    await store.checkpointer.put(latestOnly(passConfig("tree", current)), checkpointNumbered(1), METADATA, {
      messages: 1,
    });
    const beforeRead = commits();
    // The read stores the held checkpoint first, and its caller writes once it has read.
    const read = await store.checkpointer.getTuple(latestOnly(passConfig("tree", current)));
    expect(read?.checkpoint.id).toBe(checkpointNumbered(1).id);
    await store.pauses.findOrCreate(pause("after-read"), current);
    expect(commits() - beforeRead).toBe(1);

    await store.checkpointer.put(latestOnly(passConfig("tree", current)), checkpointNumbered(2), METADATA, {
      messages: 2,
    });
    const beforeRelease = commits();
    await store.leases.release(current);
    expect(commits() - beforeRelease).toBe(1);
    await close();

    const reopened = await SqliteStore.open({ path });
    const latest = await reopened.checkpointer.getTuple({
      configurable: { thread_id: "tree", checkpoint_ns: "" },
    });
    expect(latest?.checkpoint.id).toBe(checkpointNumbered(2).id);
    expect(await reopened.pauses.findByTenantIdAndPauseId("t", "after-read")).toBeDefined();
    await reopened.close();
  });

  test("resolve once applied, before their commit: the writes after them join it, and a write that waits for its commit lands with them", async () => {
    const path = dir.file(`${randomUUID()}.sqlite`);
    const { store, current, commits, close } = await openWithTakeover(path);
    const before = commits();
    const first = checkpointNumbered(1);
    const saved = await store.checkpointer.put(passConfig("tree", current), first, METADATA, { messages: 1 });
    // Resolved, and not yet committed: the next write, issued only now, can still join the transaction.
    expect(commits() - before).toBe(0);
    await store.checkpointer.putWrites(
      passConfig("tree", current, saved.configurable?.checkpoint_id as string),
      [["messages", "w1"]],
      "task-1",
    );
    await store.checkpointer.put(passConfig("tree", current), checkpointNumbered(2), METADATA, {
      messages: 2,
    });
    expect(commits() - before).toBe(0);
    // The runtime's own write waits for its commit, which carries the checkpoint writes before it.
    await store.pauses.findOrCreate(pause("after-checkpoints"), current);
    expect(commits() - before).toBe(1);
    await close();

    const reopened = await SqliteStore.open({ path });
    const latest = await reopened.checkpointer.getTuple({
      configurable: { thread_id: "tree", checkpoint_ns: "" },
    });
    expect(latest?.checkpoint.id).toBe(checkpointNumbered(2).id);
    expect((await reopened.pauses.findByTenantIdAndPauseId("t", "after-checkpoints"))?.pauseId).toBe(
      "after-checkpoints",
    );
    await reopened.close();
  });

  test("a commit that fails after they resolved: the fence's later writes are refused, other holders' are not, and nothing of them is stored", async () => {
    const { store, current, refuseNextCommit, close } = await openWithTakeover();
    const other = (await store.leases.acquire({
      key: "other-tree",
      holder: "c",
      now: 20,
      ttlMs: 10,
    })) as Fence;
    refuseNextCommit();
    await store.checkpointer.put(passConfig("tree", current), checkpointNumbered(1), METADATA, {
      messages: 1,
    });
    // Let the transaction end (it lingers a turn, then its commit is refused and it rolls back).
    await new Promise((resolve) => setTimeout(resolve, 20));

    const refused = store.pauses.findOrCreate(pause("builds-on-it"), current);
    await expect(refused).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(refused).rejects.toThrow(/did not commit/);
    await expect(
      store.checkpointer.put(passConfig("tree", current), checkpointNumbered(2), METADATA, { messages: 2 }),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.executions.save(execution("refused"), current)).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
    // Nor is the lease confirmed to it (as before an approved tool runs), though the store still holds it:
    // neither by a renewal nor by the check that writes nothing.
    await expect(store.leases.renew({ fence: current, now: 21, ttlMs: 10 })).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
    await expect(store.leases.confirm(current, 21)).rejects.toThrow(/did not commit/);
    expect(
      await store.checkpointer.getTuple({ configurable: { thread_id: "tree", checkpoint_ns: "" } }),
    ).toBe(undefined);
    expect(await store.pauses.findByTenantIdAndPauseId("t", "builds-on-it")).toBeUndefined();

    // Another tree's holder, and the same tree under a new lease, write as usual.
    await store.pauses.findOrCreate(pause("other-holder"), other);
    const next = (await store.leases.acquire({ key: "tree", holder: "d", now: 40, ttlMs: 10 })) as Fence;
    await store.checkpointer.put(passConfig("tree", next), checkpointNumbered(3), METADATA, { messages: 3 });
    await store.pauses.findOrCreate(pause("new-lease"), next);
    expect((await store.pauses.findByTenantIdAndPauseId("t", "new-lease"))?.pauseId).toBe("new-lease");
    await close();
  });

  test("a held checkpoint whose transaction never begins (a lock held past every retry) is lost: the fence's later writes are refused, and the lease is not confirmed to it", async () => {
    const path = dir.file(`${randomUUID()}.sqlite`);
    let locked = false;
    const { handle, db } = interceptStatement(
      path,
      (sql) => /^begin/i.test(sql.trim()),
      () => {
        if (locked) throw Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
      },
    );
    const store = await SqliteStore.open({
      database: handle,
      retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
    });
    try {
      const fence = (await store.leases.acquire({ key: "tree", holder: "a", now: 0, ttlMs: 1_000 })) as Fence;
      // The pass's put (keeping only the latest checkpoint, as the runtime's graphs do) waits in memory;
      // its graph goes on as if it were stored.
      const config = passConfig("tree", fence);
      const latest = { configurable: { ...config.configurable, [CHECKPOINT_HISTORY_CONFIG_KEY]: "latest" } };
      await store.checkpointer.put(latest, checkpointNumbered(1), METADATA, { messages: 1 });
      expect(db.prepare("select count(*) as n from agboss_checkpoints").get()).toEqual({ n: 0 });
      locked = true;
      // Its hold ends (4 ms): the write is sent, and its transaction cannot begin, attempt after attempt.
      await new Promise((resolve) => setTimeout(resolve, 60));
      locked = false;
      await expect(store.pauses.findOrCreate(pause("after-lost"), fence)).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      await expect(store.leases.confirm(fence, 1)).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(await store.pauses.findByTenantIdAndPauseId("t", "after-lost")).toBeUndefined();
    } finally {
      await store.close();
      db.close();
    }
  });

  test("a stale holder's held checkpoint refused after the newer holder's commit was lost does not clear that loss: the newer holder's writes stay refused", async () => {
    const { store, stale, current, refuseNextCommit, close } = await openWithTakeover();
    try {
      // The current holder's write resolves, and its commit is refused: its later writes must be refused.
      refuseNextCommit();
      await store.checkpointer.put(passConfig("tree", current), checkpointNumbered(1), METADATA, {
        messages: 1,
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      // Then the stale holder's held checkpoint is sent (its hold ends) and refused by its fence: a loss
      // of the older epoch, noted after the newer one's.
      const config = passConfig("tree", stale);
      const latest = { configurable: { ...config.configurable, [CHECKPOINT_HISTORY_CONFIG_KEY]: "latest" } };
      await store.checkpointer.put(latest, checkpointNumbered(2), METADATA, { messages: 2 });
      await new Promise((resolve) => setTimeout(resolve, 30));
      await expect(store.pauses.findOrCreate(pause("after-both"), current)).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      await expect(store.leases.confirm(current, 21)).rejects.toThrow(/did not commit/);
      expect(await store.pauses.findByTenantIdAndPauseId("t", "after-both")).toBeUndefined();
    } finally {
      await close();
    }
  });

  test("a renewal queued before the failed commit, which runs after it in a transaction of its own, is refused", async () => {
    const { store, current, refuseNextCommit, close } = await openWithTakeover();
    refuseNextCommit();
    // Resolved; its transaction is still open, waiting a turn for more.
    await store.checkpointer.put(passConfig("tree", current), checkpointNumbered(1), METADATA, {
      messages: 1,
    });
    // A transaction carries at most 64 units: these fill the put's, so the renewal runs in the next one.
    const fillers = Array.from({ length: 63 }, (_, i) => store.threads.save(thread(`filler-${i}`)));
    const renewal = store.leases.renew({ fence: current, now: 21, ttlMs: 10 });
    const filled = await Promise.allSettled(fillers);
    expect(filled.every((result) => result.status === "rejected")).toBe(true);
    await expect(renewal).rejects.toBeInstanceOf(StoreUnavailableError);
    await close();
  });

  test("a transient fault after they resolved does not run their transaction again: it fails, and their fence with it", async () => {
    const { store, current, commits, refuseNextCommit, close } = await openWithTakeover();
    const before = commits();
    // SQLITE_BUSY is transient: a transaction that meets it is otherwise run again whole.
    refuseNextCommit("SQLITE_BUSY");
    await store.checkpointer.put(passConfig("tree", current), checkpointNumbered(1), METADATA, {
      messages: 1,
    });
    // A write queued behind it, in the same transaction, fails with it.
    await expect(store.threads.save(thread("same-transaction"))).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
    expect(commits() - before).toBe(0);
    expect(
      await store.checkpointer.getTuple({ configurable: { thread_id: "tree", checkpoint_ns: "" } }),
    ).toBe(undefined);
    await expect(store.pauses.findOrCreate(pause("builds-on-it"), current)).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
    // Writes outside the fence go on.
    await store.threads.save(thread("later"));
    expect(await store.threads.findByTenantIdAndThreadId("t", "later")).toBeDefined();
    await close();
  });

  test("close() waits for their commit, not only for them to resolve", async () => {
    const path = dir.file(`${randomUUID()}.sqlite`);
    const store = await SqliteStore.open({ path });
    const fence = (await store.leases.acquire({ key: "tree", holder: "a", now: 0, ttlMs: 10 })) as Fence;
    await store.checkpointer.put(passConfig("tree", fence), checkpointNumbered(1), METADATA, { messages: 1 });
    await store.close();
    const reopened = await SqliteStore.open({ path });
    const latest = await reopened.checkpointer.getTuple({
      configurable: { thread_id: "tree", checkpoint_ns: "" },
    });
    expect(latest?.checkpoint.id).toBe(checkpointNumbered(1).id);
    await reopened.close();
  });
});

describe("a pause marked sent", () => {
  test("resolves once applied: the pass's checkpoint writes after it join its commit, which a write that waits for its commit carries", async () => {
    const path = dir.file(`${randomUUID()}.sqlite`);
    const { store, current, commits, close } = await openWithTakeover(path);
    await store.pauses.findOrCreate(pause("asked"), current);
    const before = commits();
    const sent = await store.pauses.markSent("t", "asked", current, { ts: "1.2" });
    expect(sent?.isSent).toBe(true);
    // Not committed yet: the interrupt's pending writes, issued only now, join the same transaction.
    expect(commits() - before).toBe(0);
    const saved = await store.checkpointer.put(passConfig("tree", current), checkpointNumbered(1), METADATA, {
      messages: 1,
    });
    await store.checkpointer.putWrites(
      passConfig("tree", current, saved.configurable?.checkpoint_id as string),
      [["__interrupt__", { pauseId: "asked" }]],
      "task-1",
    );
    expect(commits() - before).toBe(0);
    await store.executions.save(execution("resting"), current);
    expect(commits() - before).toBe(1);
    await close();

    const reopened = await SqliteStore.open({ path });
    const stored = await reopened.pauses.findByTenantIdAndPauseId("t", "asked");
    expect(stored?.isSent).toBe(true);
    expect(stored?.channelRef).toEqual({ ts: "1.2" });
    await reopened.close();
  });

  test("a commit that fails after it resolved: the mark is not stored, and the fence's later writes are refused", async () => {
    const path = dir.file(`${randomUUID()}.sqlite`);
    const { store, current, refuseNextCommit, close } = await openWithTakeover(path);
    await store.pauses.findOrCreate(pause("asked"), current);
    refuseNextCommit();
    expect((await store.pauses.markSent("t", "asked", current))?.isSent).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await expect(store.executions.save(execution("resting"), current)).rejects.toThrow(/did not commit/);
    // Recovery asks again: the pause is stored as not sent.
    expect((await store.pauses.findByTenantIdAndPauseId("t", "asked"))?.isSent).toBe(false);
    await close();
  });

  test("by a holder whose lease was taken: refused, and the pause stays unsent", async () => {
    const { store, stale, current, close } = await openWithTakeover();
    await store.pauses.findOrCreate(pause("asked"), current);
    await expect(store.pauses.markSent("t", "asked", stale)).rejects.toBeInstanceOf(LeaseLostError);
    expect((await store.pauses.findByTenantIdAndPauseId("t", "asked"))?.isSent).toBe(false);
    await close();
  });
});

describe("a unit of one write statement in a shared transaction", () => {
  const WRITES = 'insert into "agboss_checkpoint_writes"';

  /**
   * A store whose next insert of pending writes fails (as `code`), ending the transaction first when
   * `endsTransaction` (SQLite rolls a transaction back on some I/O errors); it counts the savepoints and
   * the commits run.
   */
  async function failingWrites(path: string, code: string, endsTransaction: boolean) {
    let savepoints = 0;
    let commits = 0;
    let fail = false;
    const connection: { db?: Database.Database } = {};
    const { handle, db } = interceptStatement(
      path,
      (sql) => sql.startsWith(WRITES) || sql === "savepoint agboss_unit" || sql === "commit",
      (sql) => {
        if (sql === "commit") {
          commits += 1;
          return;
        }
        if (!sql.startsWith(WRITES)) {
          savepoints += 1;
          return;
        }
        if (!fail) return;
        fail = false;
        if (endsTransaction) connection.db?.exec("rollback");
        throw Object.assign(new Error(`pending writes refused (${code})`), { code });
      },
    );
    connection.db = db;
    const store = await SqliteStore.open({ database: handle });
    const fence = (await store.leases.acquire({ key: "tree", holder: "a", now: 0, ttlMs: 10 })) as Fence;
    return {
      store,
      fence,
      savepoints: () => savepoints,
      commits: () => commits,
      failNext: () => {
        fail = true;
      },
      close: async () => {
        await store.close();
        db.close();
      },
    };
  }

  /**
   * A thread saved, a pass's pending writes, and another thread saved, queued into one transaction. The
   * pending writes join the queue last (they are serialized first): the thread "before" opens the
   * transaction, "after" is the second unit (under a savepoint), the pending writes the third.
   */
  function queueThree(store: SqliteStore, fence: Fence, round = "", onRefused?: () => void) {
    const writes = store.checkpointer.putWrites(
      passConfig("tree", fence, checkpointNumbered(1).id),
      [["messages", { role: "tool", content: "refunded" }]],
      "task-1",
    );
    return Promise.allSettled([
      store.threads.save(thread(`before${round}`)),
      onRefused === undefined
        ? writes
        : writes.catch((error: unknown) => {
            onRefused();
            throw error;
          }),
      store.threads.save(thread(`after${round}`)),
    ]);
  }

  test("runs without a savepoint: its statement failing rejects it alone, and the others commit", async () => {
    const path = dir.file(`${randomUUID()}.sqlite`);
    const { store, fence, savepoints, commits, failNext, close } = await failingWrites(
      path,
      "SQLITE_CONSTRAINT",
      false,
    );
    const before = savepoints();
    const [first, writes, last] = await queueThree(store, fence);
    expect(first.status).toBe("fulfilled");
    expect(writes.status).toBe("fulfilled");
    expect(last.status).toBe("fulfilled");
    // Only "after" had a savepoint: the pending writes are one statement.
    expect(savepoints() - before).toBe(1);

    failNext();
    const commitsBefore = commits();
    // A write issued once the refusal is known joins the same transaction, after the failed statement.
    let following: Promise<unknown> | undefined;
    const [again, refused, later] = await queueThree(store, fence, "-2", () => {
      following = store.threads.save(thread("following-2"));
    });
    await following;
    expect(again.status).toBe("fulfilled");
    expect(refused.status).toBe("rejected");
    expect(later.status).toBe("fulfilled");
    expect(commits() - commitsBefore).toBe(1);
    await close();
    // The units before the refused one, and the one after it, are on disk.
    const reopened = await SqliteStore.open({ path });
    for (const name of ["before-2", "after-2", "following-2"]) {
      expect(await reopened.threads.findByTenantIdAndThreadId("t", name)).toBeDefined();
    }
    await reopened.close();
  });

  test("a failure that ended the transaction fails every unit it carried, and nothing of it is stored", async () => {
    const path = dir.file(`${randomUUID()}.sqlite`);
    const { store, fence, failNext, close } = await failingWrites(path, "SQLITE_IOERR", true);
    failNext();
    const results = await queueThree(store, fence);
    expect(results.map((result) => result.status)).toEqual(["rejected", "rejected", "rejected"]);
    for (const result of results) {
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: "SQLITE_IOERR" });
    }
    // The store goes on: the next write lands, and nothing of the failed transaction is there.
    await store.threads.save(thread("next"));
    expect(await store.threads.findByTenantIdAndThreadId("t", "before")).toBe(undefined);
    expect(await store.threads.findByTenantIdAndThreadId("t", "after")).toBe(undefined);
    expect(await store.threads.findByTenantIdAndThreadId("t", "next")).toBeDefined();
    await close();
  });
});

describe("an execution's record saved with its lease's release, in a shared transaction", () => {
  const RELEASE = 'update "agboss_leases" set "expires_at"';

  /**
   * A store whose next lease release fails (after `failNext`, as a constraint would: the transaction
   * stays open), with the statements `counted` (a savepoint, or a commit) counted, and a lease on "tree".
   */
  async function failingRelease(path: string, counted: string) {
    let count = 0;
    let fail = false;
    const { handle, db } = interceptStatement(
      path,
      (sql) => sql.startsWith(RELEASE) || sql === counted,
      (sql) => {
        if (sql === counted) {
          count += 1;
          return;
        }
        if (!fail) return;
        fail = false;
        throw Object.assign(new Error("lease release refused (SQLITE_CONSTRAINT)"), {
          code: "SQLITE_CONSTRAINT",
        });
      },
    );
    const store = await SqliteStore.open({ database: handle });
    const fence = (await store.leases.acquire({ key: "tree", holder: "a", now: 0, ttlMs: 60_000 })) as Fence;
    return {
      store,
      fence,
      counted: () => count,
      failNext: () => {
        fail = true;
      },
      close: async () => {
        await store.close();
        db.close();
      },
    };
  }

  test("runs without a savepoint: a release that fails rejects the save alone, the record stays in the commit with the others, and the lease is left to lapse", async () => {
    const path = dir.file(`${randomUUID()}.sqlite`);
    const {
      store,
      fence,
      counted: savepoints,
      failNext,
      close,
    } = await failingRelease(path, "savepoint agboss_unit");
    try {
      const saved = { ...execution("e-1"), status: ExecutionStatus.Completed };
      // The thread opens the transaction; the save and the release share it behind, and the last
      // thread after them.
      let results = await Promise.allSettled([
        store.threads.save(thread("before")),
        store.executions.save(execution("e-0"), fence),
        store.threads.save(thread("after")),
      ]);
      expect(results.map((result) => result.status)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
      const savepointsBefore = savepoints();
      failNext();
      results = await Promise.allSettled([
        store.threads.save(thread("before-2")),
        store.executions.save(saved, fence, { release: true }),
        store.threads.save(thread("after-2")),
      ]);
      expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect(savepoints() - savepointsBefore).toBe(1);
      await store.close();
      const reopened = await SqliteStore.open({ path });
      expect((await reopened.executions.findByTenantIdAndExecutionId("t", "e-1"))?.status).toBe(
        ExecutionStatus.Completed,
      );
      expect(await reopened.threads.findByTenantIdAndThreadId("t", "after-2")).toBeDefined();
      // Not released: its holder's lease still runs, until it lapses.
      expect(await reopened.leases.acquire({ key: "tree", holder: "b", now: 1, ttlMs: 10 })).toBeUndefined();
      await reopened.close();
    } finally {
      await close();
    }
  });

  test("after such a save failed, a read waits for the commit instead of running in the transaction: the record left in it was never reported done", async () => {
    const {
      store,
      fence,
      counted: commits,
      failNext,
      close,
    } = await failingRelease(dir.file(`${randomUUID()}.sqlite`), "commit");
    try {
      await store.pauses.findOrCreate(pause("asked"), fence);
      const before = commits();
      // The sent mark resolves once applied: until then, reads run in its transaction and see it.
      await store.pauses.markSent("t", "asked", fence);
      failNext();
      const record = { ...execution("e-1"), status: ExecutionStatus.Completed };
      const saving = store.executions.save(record, fence, { release: true });
      // A checkpoint write behind it resolves once applied, and the transaction waits a turn again.
      const putting = store.checkpointer.put(passConfig("tree", fence), checkpointNumbered(1), METADATA, {
        messages: 1,
      });
      await expect(saving).rejects.toMatchObject({ code: "SQLITE_CONSTRAINT" });
      await putting;
      expect(commits() - before).toBe(0);
      let committedWhenRead: number | undefined;
      const found = await store.executions.findByTenantIdAndExecutionId("t", "e-1").then((record) => {
        committedWhenRead = commits() - before;
        return record;
      });
      expect(found?.status).toBe(ExecutionStatus.Completed);
      expect(committedWhenRead).toBe(1);
    } finally {
      await close();
    }
  });
});

describe("a read while the open transaction waits a turn", () => {
  test("runs in it when it holds only writes that resolved as applied: it sees them, and the write that waits for its commit joins it", async () => {
    const path = dir.file(`${randomUUID()}.sqlite`);
    const { store, current, commits, close } = await openWithTakeover(path);
    await store.pauses.findOrCreate(pause("asked"), current);
    const before = commits();
    await store.pauses.markSent("t", "asked", current);
    await store.checkpointer.put(passConfig("tree", current), checkpointNumbered(1), METADATA, {
      messages: 1,
    });
    // What a pass reads after its interrupt: the tree's open pauses (and its checkpoint), not committed yet.
    expect((await store.pauses.findByTenantIdAndPauseId("t", "asked"))?.isSent).toBe(true);
    const latest = await store.checkpointer.getTuple({
      configurable: { thread_id: "tree", checkpoint_ns: "" },
    });
    expect(latest?.checkpoint.id).toBe(checkpointNumbered(1).id);
    expect(commits() - before).toBe(0);
    // The execution's rest, which waits for its commit, shares it.
    await store.executions.save(execution("resting"), current);
    expect(commits() - before).toBe(1);
    await close();
  });

  test("waits for the commit while the transaction holds a write that waits for it", async () => {
    const { store, current, commits, close } = await openWithTakeover();
    await store.checkpointer.put(passConfig("tree", current), checkpointNumbered(1), METADATA, {
      messages: 1,
    });
    const before = commits();
    // Both join the put's transaction: a write whose caller waits for its commit, then a checkpoint
    // write that resolves once applied, after which the transaction waits a turn again.
    const saving = store.threads.save(thread("saved"));
    await store.checkpointer.put(passConfig("tree", current), checkpointNumbered(2), METADATA, {
      messages: 2,
    });
    expect(commits() - before).toBe(0);
    let committedWhenRead: number | undefined;
    const found = await store.threads.findByTenantIdAndThreadId("t", "saved").then((thread) => {
      committedWhenRead = commits() - before;
      return thread;
    });
    await saving;
    // The read saw the thread only once it was committed.
    expect(found).toBeDefined();
    expect(committedWhenRead).toBe(1);
    await close();
  });

  test("that fails and ends the transaction (SQLite rolls back on an I/O error): the transaction fails with it, and nothing after it runs outside one", async () => {
    let failNextRead = false;
    // The next read of a thread rolls the open transaction back and fails, as an I/O error would.
    const { handle, db } = interceptStatement(
      dir.file(`${randomUUID()}.sqlite`),
      (sql) => sql.startsWith('select * from "agboss_threads"'),
      () => {
        if (!failNextRead) return;
        failNextRead = false;
        if (db.inTransaction) db.exec("rollback");
        throw Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR" });
      },
    );
    const store = await SqliteStore.open({ database: handle });
    const fence = (await store.leases.acquire({ key: "tree", holder: "a", now: 0, ttlMs: 10 })) as Fence;
    await store.checkpointer.put(passConfig("tree", fence), checkpointNumbered(1), METADATA, { messages: 1 });
    failNextRead = true;
    // Runs in the open transaction, fails there, and is read again once the transaction has ended.
    const read = store.threads.findByTenantIdAndThreadId("t", "queued");
    const saving = store.threads.save(thread("queued"));
    expect(await read).toBeUndefined();
    await expect(saving).rejects.toBeInstanceOf(StoreUnavailableError);
    // Nothing of that transaction is stored, and the fence's later writes are refused.
    expect(await store.threads.findByTenantIdAndThreadId("t", "queued")).toBeUndefined();
    expect(
      await store.checkpointer.getTuple({ configurable: { thread_id: "tree", checkpoint_ns: "" } }),
    ).toBe(undefined);
    await expect(store.executions.save(execution("refused"), fence)).rejects.toThrow(/did not commit/);
    await store.close();
    db.close();
  });
});

describe("fence checks in one transaction", () => {
  test("a fence is read once per transaction, however many of its writes share it", async () => {
    const { store, db, ran } = await openTracingStatements();
    const fence = (await store.leases.acquire({ key: "tree", holder: "a", now: 0, ttlMs: 10 })) as Fence;
    ran.splice(0);
    await Promise.all([
      store.pauses.findOrCreate(pause("one"), fence),
      store.pauses.findOrCreate(pause("two"), fence),
      store.executions.save(execution("e"), fence),
    ]);
    expect(ran.filter((sql) => sql === "commit")).toHaveLength(1);
    expect(ran.filter((sql) => sql === 'select "epoch" from')).toHaveLength(1);
    // The next transaction reads it again.
    ran.splice(0);
    await store.pauses.findOrCreate(pause("three"), fence);
    expect(ran.filter((sql) => sql === 'select "epoch" from')).toHaveLength(1);
    await db.destroy();
  });

  test("a lease granted in the transaction is current there: the writes under it that join it read no epoch", async () => {
    const { store, db, ran } = await openTracingStatements();
    ran.splice(0);
    await store.atomically(async () => {
      const granted = (await store.leases.acquire({ key: "tree", holder: "a", now: 0, ttlMs: 10 })) as Fence;
      await store.pauses.findOrCreate(pause("under-it"), granted);
      await store.executions.save(execution("e"), granted);
    });
    expect(ran.filter((sql) => sql === "commit")).toHaveLength(1);
    expect(ran.filter((sql) => sql === 'select "epoch" from')).toHaveLength(0);
    expect(await store.pauses.findByTenantIdAndPauseId("t", "under-it")).toBeDefined();
    await db.destroy();
  });

  test("after a takeover in the transaction the old fence is read again, and a grant rolled back with its unit is forgotten", async () => {
    const { store, db, ran } = await openTracingStatements();
    const first = (await store.leases.acquire({ key: "tree", holder: "a", now: 0, ttlMs: 10 })) as Fence;
    ran.splice(0);
    // One transaction: a write under `first`, a takeover, then `first` again, which must be refused.
    const results = await Promise.allSettled([
      store.pauses.findOrCreate(pause("before"), first),
      store.leases.acquire({ key: "tree", holder: "b", now: 1, ttlMs: 10, takeOver: true }),
      store.pauses.findOrCreate(pause("stale"), first),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected"]);
    expect(ran.filter((sql) => sql === "commit")).toHaveLength(1);
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
    const second = (results[1] as PromiseFulfilledResult<Fence>).value;

    // One transaction: a unit that takes the lease over, writes under the new epoch and then fails is
    // rolled back to its savepoint; the epoch it checked is gone with it, and the one before holds again.
    // The writes after it are queued from inside it, but outside its unit of work: units of their own.
    let afterIt: Promise<unknown>[] = [];
    const queueAfterIt = AsyncResource.bind((granted: Fence) => {
      afterIt = [
        store.pauses.findOrCreate(pause("granted-gone"), granted),
        store.pauses.findOrCreate(pause("second-holds"), second),
      ];
    });
    const units = await Promise.allSettled([
      store.threads.save(thread("first-unit")),
      store.atomically(async () => {
        const granted = (await store.leases.acquire({
          key: "tree",
          holder: "c",
          now: 2,
          ttlMs: 10,
          takeOver: true,
        })) as Fence;
        await store.pauses.findOrCreate(pause("rolled-back"), granted);
        queueAfterIt(granted);
        throw new Error("the unit fails");
      }),
    ]);
    expect(units.map((r) => r.status)).toEqual(["fulfilled", "rejected"]);
    const [gone, holds] = await Promise.allSettled(afterIt);
    expect(gone?.status).toBe("rejected");
    expect((gone as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
    expect(holds?.status).toBe("fulfilled");
    expect(await store.pauses.findByTenantIdAndPauseId("t", "granted-gone")).toBeUndefined();
    expect(await store.pauses.findByTenantIdAndPauseId("t", "rolled-back")).toBeUndefined();
    await db.destroy();
  });
});
