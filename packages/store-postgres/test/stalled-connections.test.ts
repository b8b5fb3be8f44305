import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type LogEntry, StoreUnavailableError } from "@agboss/core";
import type { Fence } from "@agboss/core/store";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { PostgresStore, postgresFaultOf } from "../src/index.js";
import { pause } from "./fixtures.js";
import { poolerStandIn } from "./pooler-stand-in.js";
import { dropSchema, TEST_URL, uniqueSchema, waitFor } from "./postgres-server.js";

// Connections that go silent, made so for real: the server's own backend processes for the store's
// connections are frozen with SIGSTOP (only backends whose application_name this test gave its store,
// always thawed again), and a store in a child process is frozen with SIGSTOP inside a transaction.

const here = dirname(fileURLToPath(import.meta.url));
let admin: pg.Client;
beforeAll(async () => {
  admin = new pg.Client({ connectionString: TEST_URL, application_name: "agboss-test-admin" });
  await admin.connect();
});
afterAll(() => admin.end());

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openStore(
  options: {
    stallTimeoutMs?: number;
    idleInTransactionTimeoutMs?: number;
    preparedStatements?: boolean;
    connectionString?: string;
    pool?: pg.Pool;
  } = {},
) {
  const schema = uniqueSchema();
  const appName = `stalls-${randomBytes(6).toString("hex")}`;
  const logs: LogEntry[] = [];
  const store = await PostgresStore.open({
    ...(options.pool === undefined ? { connectionString: TEST_URL } : {}),
    schema,
    appName,
    maxConnections: 2,
    logger: { log: (entry) => logs.push(entry) },
    ...options,
  });
  cleanups.push(() => dropSchema(schema));
  cleanups.push(() => store.close());
  return { store, schema, appName, application: `agboss:${appName}`, logs };
}

/** The session's idle-in-transaction timeout on a connection of a store opened with `options`. */
async function idleSetting(options: Parameters<typeof openStore>[0]): Promise<string | undefined> {
  const { store } = await openStore(options);
  const { rows } = await sql<{
    idle_in_transaction_session_timeout: string;
  }>`show idle_in_transaction_session_timeout`.execute(store.db);
  return rows[0]?.idle_in_transaction_session_timeout;
}

/** The server's processes for the connections named `application`. */
async function backends(application: string): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>(
    "select pid from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid()",
    [application],
  );
  return rows.map((row) => row.pid);
}

/** Every backend this file froze and has not thawed: thawed even if the test process ends early. */
const frozenNow = new Set<number>();
process.on("exit", () => {
  for (const pid of frozenNow) thaw(pid);
});

/** Freezes `pids` (SIGSTOP) until the test ends; they are thawed (SIGCONT) whatever happens. */
function freeze(pids: readonly number[]): void {
  for (const pid of pids) {
    frozenNow.add(pid);
    try {
      process.kill(pid, "SIGSTOP");
    } catch (error) {
      throw new Error(
        `Could not freeze PostgreSQL backend ${pid} (${(error as NodeJS.ErrnoException).code}): these ` +
          "tests signal the server's processes, so they need a server on this machine whose processes " +
          "this user may signal (root, or the embedded server the test run starts when none answers).",
        { cause: error },
      );
    }
    cleanups.push(() => thaw(pid));
  }
}

function thaw(pid: number): void {
  frozenNow.delete(pid);
  try {
    process.kill(pid, "SIGCONT");
  } catch {
    // Gone already.
  }
}

const ended = (logs: LogEntry[]) => logs.filter((log) => log.event === "store.stalled-backend-ended");
const stalls = (logs: LogEntry[]) =>
  logs.filter((log) => log.event === "store.connection-lost" && /answered nothing/.test(log.message));

describe("a connection whose server stops answering (its backend frozen with SIGSTOP)", () => {
  test("a read: the connection is given up after stallTimeoutMs and the read returns from a fresh one", async () => {
    const { store, application, logs } = await openStore({ stallTimeoutMs: 1_000 });
    const asked = await store.pauses.findOrCreate(pause());
    const frozen = await backends(application);
    expect(frozen.length).toBeGreaterThan(0);
    freeze(frozen);

    const started = Date.now();
    expect(await store.pauses.findByTenantIdAndPauseId("acme", asked.pauseId)).toEqual(asked);
    const took = Date.now() - started;
    // Given up between one timeout and a quarter more (the watch looks every quarter), then run again.
    expect(took).toBeGreaterThanOrEqual(1_000);
    expect(took).toBeLessThan(5_000);
    expect(stalls(logs).length).toBeGreaterThanOrEqual(1);
    expect(stalls(logs)[0]?.level).toBe("warn");
    // The answer came from a backend that was not frozen.
    expect((await backends(application)).some((pid) => !frozen.includes(pid))).toBe(true);
  });

  test("a write whose COMMIT went out with it: StoreUnavailableError says the outcome is unknown, and it is not run again", async () => {
    const { store, schema, application, logs } = await openStore({ stallTimeoutMs: 1_000 });
    const thread = {
      tenantId: "acme",
      threadId: "t-stalled",
      ownerId: "alice",
      workflowName: "refund",
      latestExecutionId: "root-1",
      createdAt: 1_000,
      updatedAt: 1_000,
    };
    await store.threads.save(thread);
    const frozen = await backends(application);
    freeze(frozen);

    const error = await store.threads
      .save({ ...thread, updatedAt: 2_000 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(/outcome is unknown/);
    expect(postgresFaultOf((error as Error).cause)).toBe("connection-lost");
    expect(((error as Error).cause as Error).message).toMatch(/answered nothing on this connection/);
    // Not run again: nothing of this store's is waiting on the server, and no other backend ran it.
    const { rows: others } = await admin.query<{ pid: number }>(
      "select pid from pg_stat_activity where application_name = $1 and query like '%agboss_threads%'",
      [application],
    );
    expect(others.map((row) => row.pid).filter((pid) => !frozen.includes(pid))).toEqual([]);

    await waitFor(() => ended(logs)[0], "the store to end the frozen backend");
    for (const pid of frozen) thaw(pid);
    await waitFor(
      async () => ((await backends(application)).length === 0 ? true : undefined),
      "the backend to end",
    );
    const { rows } = await admin.query<{ updated_at: number | string }>(
      `select updated_at from ${pg.escapeIdentifier(schema)}.agboss_threads where thread_id = $1`,
      ["t-stalled"],
    );
    // The store ended the frozen backend (its signal waited for it), so what it had been sent never ran.
    expect(rows.map((row) => Number(row.updated_at))).toEqual([1_000]);
  });

  test("a write run again on a fresh connection never lands a second time, late, from the frozen one: its backend is ended before it thaws", async () => {
    const { store, application, logs } = await openStore({ stallTimeoutMs: 1_000 });
    await store.leases.acquire({ key: "acme/warm", holder: "a", now: 0, ttlMs: 1 });
    const frozen = await backends(application);
    freeze(frozen);

    // A lease grant is run again after a lost connection (running it twice grants the next epoch).
    const granted = await store.leases.acquire({
      key: "acme/root-9",
      holder: "a",
      now: Date.now(),
      ttlMs: 60_000,
    });
    expect(granted?.epoch).toBe(1);
    await store.leases.release(granted as Fence);
    await waitFor(() => ended(logs)[0], "the store to end the frozen backend");
    for (const pid of frozen) thaw(pid);
    await waitFor(
      async () => ((await backends(application)).some((pid) => frozen.includes(pid)) ? undefined : true),
      "the frozen backend to end",
    );

    // Had the frozen backend run the grant it had been sent, the released lease would be held again.
    expect(await store.leases.find("acme/root-9")).toMatchObject({ epoch: 1, expiresAt: 0 });
    expect(logs.filter((log) => log.event === "store.stalled-backend-not-ended")).toEqual([]);
  });

  test("with stallTimeoutMs 0 nothing is given up: the read waits for as long as the backend is frozen", async () => {
    const { store, application, logs } = await openStore({ stallTimeoutMs: 0 });
    const asked = await store.pauses.findOrCreate(pause());
    const frozen = await backends(application);
    freeze(frozen);

    let done = false;
    const read = store.pauses.findByTenantIdAndPauseId("acme", asked.pauseId).finally(() => {
      done = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(done).toBe(false);
    for (const pid of frozen) thaw(pid);
    expect(await read).toEqual(asked);
    expect(stalls(logs)).toEqual([]);
  });
});

describe("what is never given up", () => {
  test("a migration waiting on another instance's migration for longer than stallTimeoutMs: the store opens once it is done", async () => {
    // kysely's migrator takes this advisory lock for as long as it migrates, one instance at a time.
    const migrationLock = "3853314791062309107";
    await admin.query("select pg_advisory_lock($1)", [migrationLock]);
    cleanups.push(() => admin.query("select pg_advisory_unlock_all()"));
    const schema = uniqueSchema();
    cleanups.push(() => dropSchema(schema));
    let opened = false;
    const opening = PostgresStore.open({ connectionString: TEST_URL, schema, stallTimeoutMs: 200 }).then(
      (store) => {
        opened = true;
        cleanups.push(() => store.close());
        return store;
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(opened).toBe(false);
    await admin.query("select pg_advisory_unlock($1)", [migrationLock]);

    const store = await opening;
    expect(await store.threads.findByTenantIdAndThreadId("acme", "none")).toBeUndefined();
  });
});

describe("a store frozen inside a transaction (its process stopped with SIGSTOP)", () => {
  test("the server ends its session after idleInTransactionTimeoutMs, and another instance takes the lease over", async () => {
    const { store, schema } = await openStore();
    const fence = (await store.leases.acquire({ key: "acme/root-1", holder: "a", now: 0, ttlMs: 60_000 }))!;
    const holderName = `holder-${randomBytes(6).toString("hex")}`;
    const holder = await startHolder(schema, holderName, fence.key, fence.epoch, 1_500);
    holder.kill("SIGSTOP");
    cleanups.push(() => holder.kill("SIGCONT"));

    // The takeover (as app.cancel makes) waits for the row lock of the frozen holder's transaction
    // until the server ends that session; without the timeout it would wait for as long as it is frozen.
    const taken = await store.leases.acquire({
      key: fence.key,
      holder: "b",
      now: Date.now(),
      ttlMs: 60_000,
      takeOver: true,
    });
    expect(taken?.epoch).toBe(fence.epoch + 1);
    await waitFor(
      async () => ((await backends(`agboss:${holderName}`)).length === 0 ? true : undefined),
      "the holder's session to end",
    );
  });

  test("a unit of work of this store left idle that long: the server ends its session, and the unit, whose next statement finds the connection gone, runs again and commits", async () => {
    const { store } = await openStore({ idleInTransactionTimeoutMs: 1_000 });
    const thread = {
      tenantId: "acme",
      threadId: "t-idle",
      ownerId: "alice",
      workflowName: "refund",
      latestExecutionId: "root-1",
      createdAt: 1_000,
      updatedAt: 1_000,
    };
    let attempts = 0;
    await store.atomically(async () => {
      attempts += 1;
      await store.leases.acquire({ key: "acme/t-idle", holder: "a", now: Date.now(), ttlMs: 60_000 });
      // The first attempt's transaction sits without a statement past the server's timeout.
      if (attempts === 1) await new Promise((resolve) => setTimeout(resolve, 1_600));
      await store.threads.save(thread);
    });
    expect(attempts).toBe(2);
    expect(await store.threads.findByTenantIdAndThreadId("acme", "t-idle")).toEqual(thread);
    expect((await store.leases.find("acme/t-idle"))?.epoch).toBe(1);
  });

  test("the session setting: half the stall timeout by default, as given otherwise, 0 for off; never on a pool the application passes", async () => {
    expect(await idleSetting({})).toBe("15s");
    expect(await idleSetting({ stallTimeoutMs: 4_000 })).toBe("2s");
    expect(await idleSetting({ stallTimeoutMs: 0 })).toBe("15s");
    expect(await idleSetting({ idleInTransactionTimeoutMs: 2_500 })).toBe("2500ms");
    expect(await idleSetting({ preparedStatements: false, idleInTransactionTimeoutMs: 4_000 })).toBe("4s");
    expect(await idleSetting({ idleInTransactionTimeoutMs: 0 })).toBe("0");
    const pool = new pg.Pool({ connectionString: TEST_URL, max: 1 });
    cleanups.push(() => pool.end());
    expect(await idleSetting({ pool })).toBe("0");
  });

  test("timeouts out of range are refused when the store opens", async () => {
    await expect(PostgresStore.open({ connectionString: TEST_URL, stallTimeoutMs: 50 })).rejects.toThrow(
      /stallTimeoutMs must be 0 \(off\) or a whole number of milliseconds from 100 to 2147483647; got 50/,
    );
    await expect(
      PostgresStore.open({ connectionString: TEST_URL, idleInTransactionTimeoutMs: 2 ** 31 }),
    ).rejects.toThrow(/idleInTransactionTimeoutMs must be 0 \(off\)/);
  });
});

/** Starts the frozen-holder worker and resolves once it holds the lease row in its transaction. */
async function startHolder(
  schema: string,
  appName: string,
  key: string,
  epoch: number,
  idleInTransactionTimeoutMs: number,
): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "--conditions=@agboss/source",
      join(here, "frozen-holder-worker.ts"),
      TEST_URL,
      schema,
      appName,
      key,
      String(epoch),
      String(idleInTransactionTimeoutMs),
    ],
    { cwd: join(here, ".."), stdio: ["ignore", "pipe", "pipe"] },
  );
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    }
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    let out = "";
    child.once("exit", (code) => reject(new Error(`the holder exited (${code}) early: ${stderr}`)));
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("holding true\n")) resolve();
      else if (out.includes("holding")) reject(new Error(`the holder could not renew: ${out}`));
    });
  });
  return child;
}

describe("behind a pooler (a stand-in that, like PgBouncer, announces a process id that is not the server's)", () => {
  test("the session idle timeout is not set, since the session would outlive the store's use of it; a given one is warned of once", async () => {
    const pooler = await poolerStandIn();
    cleanups.push(() => pooler.close());
    const given = await openStore({ connectionString: pooler.url, idleInTransactionTimeoutMs: 2_500 });
    const { rows } = await sql<{
      idle_in_transaction_session_timeout: string;
    }>`show idle_in_transaction_session_timeout`.execute(given.store.db);
    expect(rows[0]?.idle_in_transaction_session_timeout).toBe("0");
    await given.store.threads.findByTenantIdAndThreadId("acme", "none");
    const said = given.logs.filter((log) => log.event === "store.idle-timeout-not-set");
    expect(said.map((log) => log.level)).toEqual(["warn"]);
    expect(said[0]?.message).toMatch(/idle_transaction_timeout/);

    const defaulted = await openStore({ connectionString: pooler.url });
    expect(await idleSetting({ connectionString: pooler.url })).toBe("0");
    await waitFor(
      () => defaulted.logs.find((log) => log.event === "store.idle-timeout-not-set"),
      "the store to note the pooler",
    );
    expect(defaulted.logs.find((log) => log.event === "store.idle-timeout-not-set")?.level).toBe("debug");
  });

  test("a stalled connection is given up, but its server process, which the store could not confirm as its own, is not ended", async () => {
    const pooler = await poolerStandIn();
    cleanups.push(() => pooler.close());
    const { store, application, logs } = await openStore({
      connectionString: pooler.url,
      stallTimeoutMs: 1_000,
    });
    const asked = await store.pauses.findOrCreate(pause());
    const frozen = await backends(application);
    expect(frozen.length).toBeGreaterThan(0);
    freeze(frozen);

    expect(await store.pauses.findByTenantIdAndPauseId("acme", asked.pauseId)).toEqual(asked);
    expect(stalls(logs).length).toBeGreaterThanOrEqual(1);
    expect(ended(logs)).toEqual([]);
    for (const pid of frozen) thaw(pid);
    // The pooler kept those server connections: their processes still run once thawed.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const running = await backends(application);
    expect(frozen.every((pid) => running.includes(pid))).toBe(true);
  });
});
