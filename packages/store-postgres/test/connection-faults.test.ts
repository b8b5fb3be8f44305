import { randomBytes, randomInt } from "node:crypto";
import { LeaseLostError, type LogEntry, PauseStatus, type Store, StoreUnavailableError } from "@agboss/core";
import type { Fence } from "@agboss/core/store";
import { type AgbossDatabase, KyselyStore } from "@agboss/store-kysely";
import { Kysely } from "kysely";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { POSTGRES_CAPABILITIES, PostgresStore, postgresFaultOf } from "../src/index.js";
import { SchemaScopedPostgresDialect } from "../src/schema-introspector.js";
import { watchPool } from "../src/watched-pool.js";
import { checkpoint, checkpointConfig, META, pause } from "./fixtures.js";
import { dropSchema, TEST_URL, uniqueSchema, waitFor } from "./postgres-server.js";

// These tests terminate PostgreSQL backends, but only their own: each store gets an `appName` no other
// store uses, and only backends with that application_name are ever terminated.

/** Whatever reached the process as an uncaught exception or unhandled rejection during these tests. */
const uncaught: unknown[] = [];
const collect = (error: unknown) => uncaught.push(error);
let admin: pg.Client;
beforeAll(async () => {
  process.on("uncaughtException", collect);
  process.on("unhandledRejection", collect);
  admin = new pg.Client({ connectionString: TEST_URL, application_name: "agboss-test-admin" });
  await admin.connect();
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  expect(uncaught.splice(0)).toEqual([]);
});
afterAll(async () => {
  await admin.end();
  process.off("uncaughtException", collect);
  process.off("unhandledRejection", collect);
});

/** A store on a fresh schema with an application name of its own, and what it logged. */
async function openStore(
  options: { retry?: { attempts?: number; baseDelayMs?: number; maxDelayMs?: number } } = {},
) {
  const schema = uniqueSchema();
  const appName = `faults-${randomBytes(6).toString("hex")}`;
  const logs: LogEntry[] = [];
  const store = await PostgresStore.open({
    connectionString: TEST_URL,
    schema,
    appName,
    logger: { log: (entry) => logs.push(entry) },
    ...options,
  });
  cleanups.push(() => dropSchema(schema));
  cleanups.push(() => store.close());
  return { store, schema, application: `agboss:${appName}`, logs };
}

/** Terminates every backend named `application` (never any other); returns how many. */
async function terminate(application: string): Promise<number> {
  const { rows } = await admin.query<{ terminated: boolean }>(
    "select pg_terminate_backend(pid) as terminated from pg_stat_activity " +
      "where application_name = $1 and pid <> pg_backend_pid()",
    [application],
  );
  return rows.filter((row) => row.terminated).length;
}

/** The backends named `application` that wait for a lock, with what they run. */
async function waiting(application: string): Promise<{ pid: number; query: string }[]> {
  const { rows } = await admin.query<{ pid: number; query: string }>(
    "select pid, query from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'",
    [application],
  );
  return rows;
}

/** A second connection that holds locks on the store's tables for as long as a test needs. */
async function locker(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: TEST_URL, application_name: "agboss-test-locker" });
  await client.connect();
  cleanups.push(() => client.end());
  return client;
}

const lostConnections = (logs: LogEntry[]) => logs.filter((log) => log.event === "store.connection-lost");

describe("a PostgreSQL connection that goes away", () => {
  test("idle in the pool: it is reported, and the next operations run on fresh connections", async () => {
    const { store, application, logs } = await openStore();
    const asked = await store.pauses.findOrCreate(pause());
    await Promise.all([1, 2, 3].map(() => store.pauses.findByTenantIdAndPauseId("acme", asked.pauseId)));

    expect(await terminate(application)).toBeGreaterThan(0);
    await waitFor(() => lostConnections(logs)[0], "the lost connection's warning");

    expect(await store.pauses.findByTenantIdAndPauseId("acme", asked.pauseId)).toEqual(asked);
    const resolved = await store.pauses.resolve("acme", asked.pauseId, { decision: "yes" as never }, 2_000);
    expect(resolved?.status).toBe(PauseStatus.Resolved);
    expect(lostConnections(logs)[0]?.level).toBe("warn");
  });

  test("under a read: the read runs again on a fresh connection and returns", async () => {
    const { store, schema, application, logs } = await openStore();
    const asked = await store.pauses.findOrCreate(pause());
    const lock = await locker();
    await lock.query("begin");
    await lock.query(`lock table ${pg.escapeIdentifier(schema)}.agboss_pauses in access exclusive mode`);

    const read = store.pauses.findByTenantIdAndPauseId("acme", asked.pauseId);
    const [first] = await waitFor(async () => nonEmpty(await waiting(application)), "the read to wait");
    expect(await terminate(application)).toBeGreaterThan(0);
    // The retry waits for the lock again, on another backend.
    await waitFor(
      async () => nonEmpty((await waiting(application)).filter((b) => b.pid !== first?.pid)),
      "the retry",
    );
    await lock.query("commit");

    expect(await read).toEqual(asked);
    expect(lostConnections(logs).length).toBeGreaterThan(0);
  });

  test("under a write transaction before COMMIT: it runs again and commits once", async () => {
    const { store, schema, application } = await openStore();
    const fence = (await store.leases.acquire({ key: "acme/root-1", holder: "a", now: 0, ttlMs: 60_000 }))!;
    const lock = await locker();
    await lock.query("begin");
    await lock.query(`select * from ${pg.escapeIdentifier(schema)}.agboss_leases where key = $1 for update`, [
      fence.key,
    ]);

    const asked = pause();
    const write = store.pauses.findOrCreate(asked, fence);
    const [first] = await waitFor(
      async () => nonEmpty(await waiting(application)),
      "the fence check to wait",
    );
    expect(await terminate(application)).toBeGreaterThan(0);
    await waitFor(
      async () => nonEmpty((await waiting(application)).filter((b) => b.pid !== first?.pid)),
      "the retry",
    );
    await lock.query("commit");

    expect((await write).pauseId).toBe(asked.pauseId);
    const { rows } = await admin.query(
      `select count(*)::int as n from ${pg.escapeIdentifier(schema)}.agboss_pauses where pause_id = $1`,
      [asked.pauseId],
    );
    expect(rows[0].n).toBe(1);
  });

  test("while COMMIT is in flight: StoreUnavailableError says the outcome is unknown, and it is not run again", async () => {
    const { store, schema, application } = await openStore();
    // The store's COMMIT is on the wire, unanswered, when its backend is terminated.
    const release = await holdCommits(schema, "agboss_threads");

    const thread = {
      tenantId: "acme",
      threadId: "t-commit",
      ownerId: "alice",
      workflowName: "refund",
      latestExecutionId: "root-1",
      createdAt: 1_000,
      updatedAt: 1_000,
    };
    const saving = store.threads.save(thread).catch((error: unknown) => error);
    await waitFor(() => committing(application), "the COMMIT to wait");
    expect(await terminate(application)).toBeGreaterThan(0);

    const error = await saving;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).code).toBe("store.unavailable");
    expect((error as Error).message).toMatch(/outcome is unknown/);
    expect((error as Error).message).toMatch(/Recovery settles it/);
    expect(postgresFaultOf((error as Error).cause)).toBe("connection-lost");
    // Not run again: a retry would be waiting on the advisory lock by now.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await waiting(application)).toEqual([]);

    await release();
    // This time the trigger had not let the COMMIT through: the row is not there.
    expect(await store.threads.findByTenantIdAndThreadId("acme", "t-commit")).toBeUndefined();
  });

  test("while a one-statement status change is in flight: StoreUnavailableError says the outcome is unknown, and it is not run again", async () => {
    const { store, schema, application } = await openStore();
    const lease = (await store.leases.acquire({ key: "tree", holder: "a", now: Date.now(), ttlMs: 60_000 }))!;
    const asked = await store.pauses.findOrCreate(pause(), lease);
    await store.pauses.resolve("acme", asked.pauseId, { decision: "yes" as never }, 2_000);
    // The test holds the pause row: the store's take (fence clause and update, one statement) waits on
    // it, sent and unanswered, when its backend is terminated.
    const lock = await locker();
    await lock.query("begin");
    await lock.query(
      `select 1 from ${pg.escapeIdentifier(schema)}.agboss_pauses where pause_id = $1 for update`,
      [asked.pauseId],
    );
    const taking = store.pauses
      .take("acme", asked.pauseId, { at: 3_000 }, lease)
      .catch((error: unknown) => error);
    await waitFor(
      async () => nonEmpty((await waiting(application)).filter((b) => /"changed" as \(update/.test(b.query))),
      "the take to wait",
    );
    expect(await terminate(application)).toBeGreaterThan(0);

    const error = await taking;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(/outcome is unknown/);
    expect(postgresFaultOf((error as Error).cause)).toBe("connection-lost");
    // Not run again: a retry would be waiting on the row by now.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await waiting(application)).toEqual([]);
    await lock.query("rollback");
    // The terminated statement did not land: the pause is still answered, and taking it works once.
    expect((await store.pauses.findByTenantIdAndPauseId("acme", asked.pauseId))?.status).toBe(
      PauseStatus.Resolved,
    );
    expect(await store.pauses.take("acme", asked.pauseId, { at: 3_000 }, lease)).toMatchObject({
      status: PauseStatus.Taken,
    });
  });

  test("while the store migrates: open fails with StoreUnavailableError saying to open it again, and opening again works", async () => {
    // Held here, kysely's migration lock keeps the store's migration waiting while its backend is terminated.
    const migrationLock = "3853314791062309107";
    await admin.query("select pg_advisory_lock($1)", [migrationLock]);
    let locked = true;
    cleanups.push(async () => {
      if (locked) await admin.query("select pg_advisory_unlock($1)", [migrationLock]);
    });
    const schema = uniqueSchema();
    const appName = `faults-${randomBytes(6).toString("hex")}`;
    cleanups.push(() => dropSchema(schema));
    const opening = PostgresStore.open({ connectionString: TEST_URL, schema, appName }).catch(
      (error: unknown) => error,
    );
    await waitFor(async () => nonEmpty(await waiting(`agboss:${appName}`)), "the migration to wait");
    expect(await terminate(`agboss:${appName}`)).toBeGreaterThan(0);

    const error = await opening;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(/open the store again/);
    expect(postgresFaultOf((error as Error).cause)).toBe("connection-lost");
    await admin.query("select pg_advisory_unlock($1)", [migrationLock]);
    locked = false;
    const store = await PostgresStore.open({ connectionString: TEST_URL, schema, appName });
    cleanups.push(() => store.close());
    expect(await store.threads.findByTenantIdAndThreadId("acme", "none")).toBeUndefined();
  });

  test("on a pool the application passed in: no crash, the read returns, and close() stops listening", async () => {
    const application = `agboss-test-own-pool-${randomBytes(6).toString("hex")}`;
    const pool = new pg.Pool({ connectionString: TEST_URL, application_name: application, max: 4 });
    cleanups.push(() => pool.end());
    const listeners = pool.listenerCount("error");
    const schema = uniqueSchema();
    cleanups.push(() => dropSchema(schema));
    const logs: LogEntry[] = [];
    const store = await PostgresStore.open({ pool, schema, logger: { log: (entry) => logs.push(entry) } });
    const asked = await store.pauses.findOrCreate(pause());

    const lock = await locker();
    await lock.query("begin");
    await lock.query(`lock table ${pg.escapeIdentifier(schema)}.agboss_pauses in access exclusive mode`);
    const read = store.pauses.findByTenantIdAndPauseId("acme", asked.pauseId);
    await waitFor(async () => nonEmpty(await waiting(application)), "the read to wait");
    expect(await terminate(application)).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await lock.query("commit");
    expect(await read).toEqual(asked);
    expect(lostConnections(logs).length).toBeGreaterThan(0);

    await store.close();
    expect(pool.listenerCount("error")).toBe(listeners);
    expect((await pool.query("select 1 as one")).rows).toEqual([{ one: 1 }]);
  });
});

describe("a storm of terminations under a steady load", () => {
  test("no crash, every failure is StoreUnavailableError, and every write that resolved is there", async () => {
    await storm(await openStore(), "");
  });

  test("with a single attempt, commits are lost: a checkpoint write that resolved is missing only when the store refuses every later write under the lease", async () => {
    const { commitLost } = await storm(await openStore({ retry: { attempts: 1 } }), " (one attempt)");
    expect(commitLost).toBe(true);
  });

  test("the same with group commit (SQLite's path): a group that meets a fault runs every unit it carried again", async () => {
    // Postgres stores never group their commits; this store does, to put the dialect-neutral group
    // path (savepoints, carried units) under real connection losses.
    const schema = uniqueSchema();
    const application = `agboss-test-group-${randomBytes(6).toString("hex")}`;
    const logs: LogEntry[] = [];
    const pool = new pg.Pool({ connectionString: TEST_URL, application_name: application });
    const watched = watchPool(pool, { log: (entry) => logs.push(entry) }, undefined);
    const db = new Kysely<AgbossDatabase>({
      dialect: new SchemaScopedPostgresDialect({ pool: watched.pool }, schema),
    });
    const store = new KyselyStore({
      db,
      capabilities: { ...POSTGRES_CAPABILITIES, groupCommit: true },
      name: "postgres:group",
      schema,
      onClose: () => db.destroy(),
    });
    cleanups.push(() => dropSchema(schema));
    cleanups.push(() => store.close());
    await store.migrate();
    await storm({ store, application, logs }, " (group commit)");
  });
});

/**
 * Four workers ask, answer, list and checkpoint in a loop while every backend of `application` is
 * terminated once, then every 150 ms for 3 seconds; then checks what each outcome promised.
 */
async function storm(
  { store, application, logs }: { store: Store; application: string; logs: LogEntry[] },
  label: string,
): Promise<{ commitLost: boolean }> {
  const fence: Fence = (await store.leases.acquire({
    key: "acme/storm",
    holder: "a",
    now: 0,
    ttlMs: 3_600_000,
  }))!;
  type Outcome = "ok" | "unavailable" | "unknown";
  const failures = { unavailable: 0, unknown: 0, other: [] as unknown[] };
  let operations = 0;
  const outcomeOf = async <T>(run: () => Promise<T>): Promise<{ outcome: Outcome; value?: T }> => {
    operations += 1;
    try {
      return { outcome: "ok", value: await run() };
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) {
        failures.other.push(error);
        throw error;
      }
      const outcome = /outcome is unknown/.test(error.message) ? "unknown" : "unavailable";
      failures[outcome] += 1;
      return { outcome };
    }
  };
  const pauses: { pauseId: string; created: Outcome; resolved?: Outcome }[] = [];
  const checkpoints: { threadId: string; id: string; outcome: Outcome }[] = [];
  let resolvedToNothing = 0;

  let running = true;
  const worker = async (w: number) => {
    const threadId = `storm-${w}`;
    for (let i = 0; running; i++) {
      const asked = pause({ threadId, rootExecutionId: "storm" });
      const entry: (typeof pauses)[number] = { pauseId: asked.pauseId, created: "ok" };
      pauses.push(entry);
      entry.created = (await outcomeOf(() => store.pauses.findOrCreate(asked, fence))).outcome;
      if (entry.created === "ok") {
        const resolved = await outcomeOf(() =>
          store.pauses.resolve("acme", asked.pauseId, { decision: { w, i } as never }, 2_000 + i),
        );
        entry.resolved = resolved.outcome;
        if (resolved.outcome === "ok" && resolved.value === undefined) resolvedToNothing += 1;
      }
      await outcomeOf(() => store.pauses.list({ tenantId: "acme", threadId }));
      const saved = checkpoint({ step: i });
      const put = await outcomeOf(() =>
        store.checkpointer.put(checkpointConfig(threadId, fence), saved, META, { step: 1 }),
      );
      checkpoints.push({ threadId, id: saved.id, outcome: put.outcome });
      await outcomeOf(() => store.checkpointer.getTuple(checkpointConfig(threadId)));
    }
  };

  const workers = [0, 1, 2, 3].map(worker);
  let terminations = 0;
  let rounds = 0;
  await new Promise((resolve) => setTimeout(resolve, 200));
  terminations += await terminate(application); // once
  rounds += 1;
  await new Promise((resolve) => setTimeout(resolve, 500));
  const stormEnds = Date.now() + 3_000;
  while (Date.now() < stormEnds) {
    terminations += await terminate(application); // then every 150 ms
    rounds += 1;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  running = false;
  await Promise.all(workers);

  expect(failures.other).toEqual([]);
  expect(uncaught).toEqual([]);
  expect(terminations).toBeGreaterThan(rounds / 2);
  expect(lostConnections(logs).length).toBeGreaterThan(0);
  expect(resolvedToNothing).toBe(0);

  // A pass's checkpoint write resolves before its commit (the pass's next write joins it). By design a
  // commit whose attempts were all spent loses such writes, and the store then refuses every later write
  // under the lease, a renewal included, so the holder never builds on them: the probe says which.
  const probe = await store.leases.renew({ fence, now: 1, ttlMs: 3_600_000 }).then(
    () => undefined,
    (error: unknown) => error,
  );
  const commitLost = probe instanceof StoreUnavailableError && /would build on it/.test(probe.message);
  if (probe !== undefined && !commitLost) throw probe;

  // After the storm: what resolved is there (a checkpoint only when no commit was lost); what failed
  // with "nothing was written" is not.
  let unknownButCommitted = 0;
  let resolvedButLost = 0;
  for (const entry of pauses) {
    const stored = await store.pauses.findByTenantIdAndPauseId("acme", entry.pauseId);
    if (entry.created === "unknown" && stored !== undefined) unknownButCommitted += 1;
    if (entry.created === "ok") expect(stored).toBeDefined();
    if (entry.created === "unavailable") expect(stored).toBeUndefined();
    if (entry.resolved === "ok") expect(stored?.status).toBe(PauseStatus.Resolved);
    if (entry.resolved === "unavailable") expect(stored?.status).toBe(PauseStatus.Pending);
  }
  for (const entry of checkpoints) {
    const stored = await store.checkpointer.getTuple(checkpointConfig(entry.threadId, undefined, entry.id));
    if (entry.outcome === "ok" && stored === undefined && commitLost) resolvedButLost += 1;
    else if (entry.outcome === "ok") expect(stored?.checkpoint.id).toBe(entry.id);
    if (entry.outcome === "unavailable") expect(stored).toBeUndefined();
    if (entry.outcome === "unknown" && stored !== undefined) unknownButCommitted += 1;
  }
  expect(pauses.filter((entry) => entry.created === "ok").length).toBeGreaterThan(0);
  if (process.env.AGBOSS_STORM_REPORT) {
    console.log(
      `storm${label}: ${operations} operations, ${rounds} rounds terminating ${terminations} backends; ` +
        `failed: ${failures.unavailable} unavailable, ${failures.unknown} outcome unknown ` +
        `(${unknownButCommitted} of which had committed), ${failures.other.length} other; ` +
        `${commitLost ? `a commit lost, ${resolvedButLost} resolved checkpoints with it; ` : ""}` +
        `${lostConnections(logs).length} lost connections logged`,
    );
  }
  return { commitLost };
}

/**
 * The statements the store's connections (named `application`) send from now on, each by its first
 * word (`begin`, `with`, `insert`, `commit`, …), in order.
 */
function statementsOf(application: string): string[] {
  const seen: string[] = [];
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function recorded(
    this: { connectionParameters?: { application_name?: string } },
    ...args: unknown[]
  ): unknown {
    if (this.connectionParameters?.application_name === application) {
      const first = args[0];
      const text = typeof first === "string" ? first : String((first as { text?: unknown })?.text ?? "");
      seen.push(text.trim().split(/\s+/, 1)[0]?.toLowerCase() ?? "");
    }
    return query.apply(this, args);
  };
  cleanups.push(async () => {
    proto.query = query;
  });
  return seen;
}

/**
 * Makes every COMMIT of a transaction that inserted into `table` of `schema` wait until the returned
 * function is called: a deferred constraint trigger, run at COMMIT, waits on an advisory lock the test holds.
 */
async function holdCommits(schema: string, table: string): Promise<() => Promise<void>> {
  const key = randomInt(1, 2 ** 47);
  const s = pg.escapeIdentifier(schema);
  await admin.query(`
    create function ${s}.hold_commit() returns trigger language plpgsql as $$
    begin perform pg_advisory_xact_lock(${key}); return null; end $$`);
  await admin.query(`
    create constraint trigger hold_commit after insert on ${s}.${pg.escapeIdentifier(table)}
    deferrable initially deferred for each row execute function ${s}.hold_commit()`);
  const lock = await locker();
  await lock.query("select pg_advisory_lock($1)", [key]);
  return async () => {
    await lock.query("select pg_advisory_unlock($1)", [key]);
  };
}

const committing = async (application: string) =>
  nonEmpty((await waiting(application)).filter((b) => /^\s*commit\s*$/i.test(b.query)));

describe("a pass's checkpoint writes (one transaction per fence)", () => {
  const lease = (store: Store, key: string) =>
    store.leases.acquire({ key, holder: "a", now: Date.now(), ttlMs: 60_000 }) as Promise<Fence>;

  test("resolve once run and share one transaction, which a fenced write the caller waits for joins and commits", async () => {
    const { store, schema, application } = await openStore();
    const fence = await lease(store, "acme/pass");
    const seen = statementsOf(application);
    const first = checkpoint({ step: 1 });
    const second = checkpoint({ step: 2 });
    await store.checkpointer.put(checkpointConfig("t-pass", fence), first, META, { step: 1 });
    await store.checkpointer.put(checkpointConfig("t-pass", fence), second, META, { step: 1 });
    await store.pauses.findOrCreate(pause({ threadId: "t-pass" }), fence);
    // One transaction: the two checkpoints, then the pause, one statement that checks the fence too and
    // answers the pause it stored, and carries the commit if the connection has it prepared already
    // (see prepared-statements.test.ts). The connection's first store transaction: its begin goes alone.
    expect(seen.filter((word) => word !== "commit")).toEqual(["begin", "with", "with", "with"]);
    expect(seen.slice(4)).toEqual(seen.length > 4 ? ["commit"] : []);
    const { rows } = await admin.query(
      `select checkpoint_id from ${pg.escapeIdentifier(schema)}.agboss_checkpoints where thread_id = 't-pass'`,
    );
    expect(rows.map((row) => row.checkpoint_id).sort()).toEqual([first.id, second.id].sort());
  });

  test("a checkpoint read waits for the writes that resolved before it to commit; the other reads do not", async () => {
    const { store, schema, application } = await openStore();
    const fence = await lease(store, "acme/pass");
    const release = await holdCommits(schema, "agboss_checkpoints");
    const saved = checkpoint({ step: 1 });
    await store.checkpointer.put(checkpointConfig("t-read", fence), saved, META, { step: 1 });
    let read: string | undefined | null = null;
    const reading = store.checkpointer.getTuple(checkpointConfig("t-read")).then((tuple) => {
      read = tuple?.checkpoint.id;
    });
    await waitFor(() => committing(application), "the pass's COMMIT to wait");
    expect(await store.pauses.list({ tenantId: "acme" })).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(read).toBeNull();
    await release();
    await reading;
    expect(read).toBe(saved.id);
  });

  test("a write of a newer epoch waits for the older pass of its lease, and close() waits for both to commit", async () => {
    const { store, schema } = await openStore();
    const older = await lease(store, "acme/pass");
    const newer = (await store.leases.acquire({
      key: "acme/pass",
      holder: "b",
      now: Date.now(),
      ttlMs: 60_000,
      takeOver: true,
    })) as Fence;
    // Two threads of one tree, so the checkpointer does not put one write behind the other.
    const stale = store.checkpointer
      .put(checkpointConfig("t-older", older), checkpoint({ step: 1 }), META, { step: 1 })
      .catch((error: unknown) => error);
    const saved = checkpoint({ step: 2 });
    const put = store.checkpointer.put(checkpointConfig("t-newer", newer), saved, META, { step: 1 });
    // Both have reached the store's transactions (the older one's pass is open, waiting for the server).
    await new Promise((resolve) => setImmediate(resolve));
    await store.close();
    await put;
    expect(await stale).toBeInstanceOf(LeaseLostError);
    const { rows } = await admin.query(
      `select thread_id, checkpoint_id from ${pg.escapeIdentifier(schema)}.agboss_checkpoints`,
    );
    expect(rows).toEqual([{ thread_id: "t-newer", checkpoint_id: saved.id }]);
  });

  test("a connection lost while the pass commits: its writes run again on a new connection and commit, and no caller sees the fault", async () => {
    const { store, schema, application, logs } = await openStore();
    const fence = await lease(store, "acme/pass");
    const release = await holdCommits(schema, "agboss_checkpoints");
    const first = checkpoint({ step: 1 });
    const second = checkpoint({ step: 2 });
    await store.checkpointer.put(checkpointConfig("t-lost", fence), first, META, { step: 1 });
    await store.checkpointer.put(checkpointConfig("t-lost", fence), second, META, { step: 1 });
    await waitFor(() => committing(application), "the pass's COMMIT to wait");
    expect(await terminate(application)).toBeGreaterThan(0);
    await release();
    for (const saved of [first, second]) {
      const tuple = await store.checkpointer.getTuple(checkpointConfig("t-lost", undefined, saved.id));
      expect(tuple?.checkpoint.id).toBe(saved.id);
    }
    expect(lostConnections(logs).length).toBeGreaterThan(0);
    // The holder goes on writing under its fence.
    await store.checkpointer.put(checkpointConfig("t-lost", fence), checkpoint({ step: 3 }), META, {
      step: 1,
    });
  });

  test("a write that joined a COMMIT lost in flight, its attempts then spent, says the outcome is unknown", async () => {
    const { store, schema, application } = await openStore({ retry: { attempts: 1 } });
    const fence = await lease(store, "acme/pass");
    const asked = await store.pauses.findOrCreate(pause({ threadId: "t-sent" }), fence);
    const release = await holdCommits(schema, "agboss_checkpoints");
    await store.checkpointer.put(checkpointConfig("t-sent", fence), checkpoint({ step: 1 }), META, {
      step: 1,
    });
    // Marking the pause sent joins the pass and commits it: its COMMIT waits, and is cut off.
    const marking = store.pauses.markSent("acme", asked.pauseId, fence).catch((error: unknown) => error);
    await waitFor(() => committing(application), "the pass's COMMIT to wait");
    expect(await terminate(application)).toBeGreaterThan(0);
    await release();
    const error = await marking;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(/outcome is unknown/);
  });

  /**
   * A lease, a pause asked under it on `threadId`, and a first pass (a checkpoint, the pause marked sent),
   * so the connection has its begin and commit prepared and the next pass carries its commit.
   */
  async function afterFirstPass(store: Store, threadId: string) {
    const fence = await lease(store, "acme/pass");
    const asked = await store.pauses.findOrCreate(pause({ threadId }), fence);
    await store.checkpointer.put(checkpointConfig(threadId, fence), checkpoint({ step: 1 }), META, {
      step: 1,
    });
    await store.pauses.markSent("acme", asked.pauseId, fence);
    return { fence, asked };
  }

  test("a connection lost while a closing statement and the COMMIT it carries are in flight: both run again, and the caller sees nothing", async () => {
    const { store, schema, application, logs } = await openStore();
    const { fence, asked } = await afterFirstPass(store, "t-carried");
    const release = await holdCommits(schema, "agboss_checkpoints");
    const saved = checkpoint({ step: 2 });
    await store.checkpointer.put(checkpointConfig("t-carried", fence), saved, META, { step: 2 });
    const marking = store.pauses.markSent("acme", asked.pauseId, fence);
    await waitFor(() => committing(application), "the carried COMMIT to wait");
    expect(await terminate(application)).toBeGreaterThan(0);
    await release();
    expect((await marking)?.isSent).toBe(true);
    const tuple = await store.checkpointer.getTuple(checkpointConfig("t-carried", undefined, saved.id));
    expect(tuple?.checkpoint.id).toBe(saved.id);
    expect(lostConnections(logs).length).toBeGreaterThan(0);
  });

  test("a connection lost while a take and the COMMIT it carries are in flight: the take says the outcome is unknown and is not run again; the checkpoint writes run again", async () => {
    const { store, schema, application, logs } = await openStore();
    const { fence, asked } = await afterFirstPass(store, "t-take");
    await store.pauses.resolve("acme", asked.pauseId, { decision: { approved: true } }, 2_000);
    const release = await holdCommits(schema, "agboss_checkpoints");
    const saved = checkpoint({ step: 2 });
    await store.checkpointer.put(checkpointConfig("t-take", fence), saved, META, { step: 2 });
    const taking = store.pauses
      .take("acme", asked.pauseId, { at: 3_000 }, fence)
      .catch((error: unknown) => error);
    await waitFor(() => committing(application), "the carried COMMIT to wait");
    expect(await terminate(application)).toBeGreaterThan(0);
    const error = await taking;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(/outcome is unknown/);
    await release();
    // The checkpoint write, which may run twice, ran again and committed; the take, cut off before its
    // commit, did not run again: the pause is still waiting to be taken.
    const tuple = await store.checkpointer.getTuple(checkpointConfig("t-take", undefined, saved.id));
    expect(tuple?.checkpoint.id).toBe(saved.id);
    expect((await store.pauses.findByTenantIdAndPauseId("acme", asked.pauseId))?.status).toBe(
      PauseStatus.Resolved,
    );
    expect(lostConnections(logs).length).toBeGreaterThan(0);
  });

  test("a fenced pause whose key another writer commits while the insert waits for it: the other's pause comes back, not an error", async () => {
    const { store, schema, application } = await openStore();
    const other = await PostgresStore.open({ connectionString: TEST_URL, schema, appName: "pause-other" });
    cleanups.push(() => other.close());
    const fence = await lease(store, "acme/pass");
    const theirs = pause({ threadId: "t-key" });
    let commit!: () => void;
    const held = new Promise<void>((resolve) => {
      commit = resolve;
    });
    // The other writer's pause with the same key, its transaction left open.
    let inserted!: () => void;
    const written = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    const writing = other.atomically(async () => {
      await other.pauses.findOrCreate(theirs);
      inserted();
      await held;
    });
    await written;
    const mine = store.pauses.findOrCreate({ ...theirs, pauseId: "pause-mine", askedAt: 9_000 }, fence);
    await waitFor(async () => nonEmpty(await waiting(application)), "the insert to wait for the other's");
    commit();
    await writing;
    expect(await mine).toEqual(theirs);
  });

  test("the lease taken before they could run again: they are gone, and the holder's later writes are refused as lease lost", async () => {
    const { store, schema, application } = await openStore({ retry: { baseDelayMs: 400, maxDelayMs: 400 } });
    const other = await PostgresStore.open({ connectionString: TEST_URL, schema, appName: "pass-other" });
    cleanups.push(() => other.close());
    const fence = await lease(store, "acme/pass");
    const release = await holdCommits(schema, "agboss_checkpoints");
    const saved = checkpoint({ step: 1 });
    await store.checkpointer.put(checkpointConfig("t-taken", fence), saved, META, { step: 1 });
    await waitFor(() => committing(application), "the pass's COMMIT to wait");
    expect(await terminate(application)).toBeGreaterThan(0);
    // Between the rollback and the next attempt (200 to 400 ms later), another instance takes the lease.
    const taken = await other.leases.acquire({
      key: "acme/pass",
      holder: "b",
      now: Date.now(),
      ttlMs: 60_000,
      takeOver: true,
    });
    expect(taken?.epoch).toBe(fence.epoch + 1);
    await release();
    expect(await store.checkpointer.getTuple(checkpointConfig("t-taken"))).toBeUndefined();
    const refused = await store.checkpointer
      .put(checkpointConfig("t-taken", fence), checkpoint({ step: 2 }), META, { step: 1 })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(LeaseLostError);
    // The new holder writes.
    await other.checkpointer.put(checkpointConfig("t-taken", taken!), checkpoint({ step: 3 }), META, {
      step: 1,
    });
  });
});

describe("postgresFaultOf", () => {
  const coded = (code: string, message = code) => Object.assign(new Error(message), { code });

  test("a lost connection, in every form pg and the server give it", () => {
    for (const code of [
      "57P01",
      "57P02",
      "57P03",
      "25P03",
      "57P05",
      "08006",
      "08003",
      "08001",
      "08P01",
      "ECONNRESET",
      "ECONNREFUSED",
      "ETIMEDOUT",
    ]) {
      expect(postgresFaultOf(coded(code)), code).toBe("connection-lost");
    }
    expect(postgresFaultOf(new Error("Connection terminated unexpectedly"))).toBe("connection-lost");
    expect(postgresFaultOf(new Error("Connection terminated"))).toBe("connection-lost");
    expect(postgresFaultOf(new Error("Client has encountered a connection error and is not queryable"))).toBe(
      "connection-lost",
    );
    expect(postgresFaultOf(new AggregateError([coded("ECONNREFUSED"), coded("ECONNREFUSED")]))).toBe(
      "connection-lost",
    );
  });

  test("work the server undid: serialization failures, deadlocks, a full server, a prepared statement dropped under the store", () => {
    for (const code of ["40001", "40P01", "53300", "26000"])
      expect(postgresFaultOf(coded(code)), code).toBe("contention");
  });

  test("nothing else: constraint violations, syntax errors, timeouts waiting for the pool, the store's own errors", () => {
    for (const code of ["23505", "23502", "42601", "42P01", "57014", "25P02", "XX000"]) {
      expect(postgresFaultOf(coded(code)), code).toBeUndefined();
    }
    expect(postgresFaultOf(new Error("timeout exceeded when trying to connect"))).toBeUndefined();
    expect(postgresFaultOf(new Error("Connection terminated due to connection timeout"))).toBeUndefined();
    expect(postgresFaultOf(new Error("Cannot use a pool after calling end on the pool"))).toBeUndefined();
    expect(postgresFaultOf(new AggregateError([coded("ECONNREFUSED"), coded("23505")]))).toBeUndefined();
    expect(postgresFaultOf(undefined)).toBeUndefined();
    expect(postgresFaultOf("57P01")).toBeUndefined();
  });
});

function nonEmpty<T>(items: T[]): T[] | undefined {
  return items.length > 0 ? items : undefined;
}
