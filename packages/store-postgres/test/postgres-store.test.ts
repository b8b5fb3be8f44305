import { LeaseLostError, PauseResolution, PauseStatus, StoreUnavailableError } from "@agboss/core";
import { FENCE_CONFIG_KEY } from "@agboss/core/store";
import {
  type AgbossDatabase,
  KyselyStore,
  STORE_MIGRATION_TABLE,
  STORE_MIGRATIONS,
} from "@agboss/store-kysely";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { POSTGRES_CAPABILITIES, POSTGRES_URL_ENV, PostgresStore, postgresStore } from "../src/index.js";
import { SchemaScopedPostgresDialect } from "../src/schema-introspector.js";
import { checkpoint, checkpointConfig, META, pause } from "./fixtures.js";
import { dropSchema, TEST_URL, uniqueSchema, withClient } from "./postgres-server.js";

const schemas: string[] = [];
const open: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const store of open.splice(0)) await store.close();
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

/** A fresh schema name, dropped after the file. */
function schema(): string {
  const name = uniqueSchema();
  schemas.push(name);
  return name;
}

/** Opens a store on its own pool, closed after the file. */
async function openStore(name: string): Promise<PostgresStore> {
  const store = await PostgresStore.open({ connectionString: TEST_URL, schema: name });
  open.push(store);
  return store;
}

const context = {
  appName: "refunds",
  clock: { now: () => 0, setTimer: () => ({ cancel() {} }) },
  logger: { log() {} },
};

describe("two PostgresStore instances over one database", () => {
  test("each sees what the other wrote, and a stale lease holder's fenced writes are refused", async () => {
    const name = schema();
    const [a, b] = [await openStore(name), await openStore(name)];

    await a.threads.save({
      tenantId: "acme",
      threadId: "t-1",
      ownerId: "alice",
      workflowName: "refund",
      latestExecutionId: "root-1",
      createdAt: 1_000,
      updatedAt: 1_000,
    });
    const leaseA = (await a.leases.acquire({ key: "acme/root-1", holder: "a", now: 1_000, ttlMs: 30_000 }))!;
    const first = checkpoint({ step: 1 });
    const saved = await a.checkpointer.put(checkpointConfig("t-1", leaseA), first, META, { step: 1 });
    const asked = await a.pauses.findOrCreate(pause({ threadId: "t-1" }), leaseA);

    expect((await b.threads.findByTenantIdAndThreadId("acme", "t-1"))?.ownerId).toBe("alice");
    expect(await b.pauses.findByTenantIdAndPauseId("acme", asked.pauseId)).toEqual(asked);
    expect((await b.checkpointer.getTuple(checkpointConfig("t-1")))?.checkpoint.channel_values).toEqual({
      step: 1,
    });
    const resolved = await b.pauses.resolve("acme", asked.pauseId, { decision: { approved: true } }, 2_000);
    expect((await a.pauses.findByTenantIdAndPauseId("acme", asked.pauseId))?.status).toBe(
      PauseStatus.Resolved,
    );
    expect(
      await a.pauses.resolve("acme", asked.pauseId, { decision: "late" as never }, 2_001),
    ).toBeUndefined();

    // B takes the lapsed lease over: every write A still tries under its old fence fails and lands nowhere.
    const leaseB = (await b.leases.acquire({ key: "acme/root-1", holder: "b", now: 40_000, ttlMs: 30_000 }))!;
    expect(leaseB.epoch).toBeGreaterThan(leaseA.epoch);
    const forked = checkpoint({ step: "a" });
    // A's checkpoint writes go with its next statement, whose fence check refuses them there (or, on a
    // connection that has not prepared them yet, at once): nothing of them is kept either way.
    const staleWrites = await Promise.allSettled([
      a.checkpointer.put(checkpointConfig("t-1", leaseA, first.id), forked, META, { step: 2 }),
      a.checkpointer.putWrites(
        { configurable: { ...saved.configurable, [FENCE_CONFIG_KEY]: leaseA } },
        [["step", 9]],
        "t",
      ),
    ]);
    for (const result of staleWrites) {
      if (result.status === "rejected") expect(result.reason).toBeInstanceOf(LeaseLostError);
    }
    await expect(a.pauses.take("acme", asked.pauseId, { at: 3_000 }, leaseA)).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    await expect(a.pauses.findOrCreate(pause(), leaseA)).rejects.toBeInstanceOf(LeaseLostError);
    // Not renewed: false, or refused as lost when A's pass was lost to the takeover at its fence check.
    const renewed = await a.leases
      .renew({ fence: leaseA, now: 40_001, ttlMs: 30_000 })
      .catch((error: unknown) => error);
    expect(renewed === false || renewed instanceof LeaseLostError).toBe(true);

    const taken = await b.pauses.take("acme", asked.pauseId, { at: 3_000 }, leaseB);
    expect(taken).toMatchObject({ status: PauseStatus.Taken, answer: resolved?.answer });
    for (const store of [a, b]) {
      const latest = await store.checkpointer.getTuple(checkpointConfig("t-1"));
      expect(latest?.checkpoint.id).toBe(first.id);
      expect(latest?.pendingWrites).toEqual([]);
      expect((await store.pauses.list({ tenantId: "acme" })).map((p) => p.status)).toEqual([
        PauseStatus.Taken,
      ]);
    }
  });

  test("a takeover waits for a fenced write in flight, so the old holder's last write lands before the new epoch", async () => {
    const name = schema();
    const [a, b] = [await openStore(name), await openStore(name)];
    const lease = (await a.leases.acquire({ key: "tree", holder: "a", now: 0, ttlMs: 10 }))!;
    const asked = await a.pauses.findOrCreate(pause(), lease);

    // Another session holds the pause row, so A's fenced markSent stops after its fence check.
    const blocker = new pg.Client({ connectionString: TEST_URL });
    await blocker.connect();
    try {
      await blocker.query("begin");
      await blocker.query(
        `select 1 from ${pg.escapeIdentifier(name)}.agboss_pauses where pause_id = $1 for update`,
        [asked.pauseId],
      );
      const events: string[] = [];
      const write = a.pauses.markSent("acme", asked.pauseId, lease).then((p) => {
        events.push("write");
        return p;
      });
      await waitForLockWaits(name, 1);
      const takeover = b.leases.acquire({ key: "tree", holder: "b", now: 20, ttlMs: 10 }).then((l) => {
        events.push("takeover");
        return l;
      });
      await waitForLockWaits(name, 2);
      expect(events).toEqual([]);
      await blocker.query("commit");
      const [sent, granted] = await Promise.all([write, takeover]);
      expect(events).toEqual(["write", "takeover"]);
      expect(sent?.isSent).toBe(true);
      expect(granted?.epoch).toBe(lease.epoch + 1);
      await expect(
        a.pauses.cancelByTenantIdAndPauseId(
          "acme",
          asked.pauseId,
          { resolution: PauseResolution.Withdrawn, at: 30 },
          lease,
        ),
      ).rejects.toBeInstanceOf(LeaseLostError);
    } finally {
      await blocker.query("rollback").catch(() => undefined);
      await blocker.end();
    }
  });

  test("stores opened at once on an empty schema migrate it exactly once", async () => {
    const name = schema();
    const stores = await Promise.all([openStore(name), openStore(name), openStore(name)]);
    const rows = await stores[0]!.db
      .selectFrom(STORE_MIGRATION_TABLE as never)
      .select("name" as never)
      .execute();
    expect(rows).toHaveLength(STORE_MIGRATIONS.length);
    expect(new Set(rows.map((row) => (row as { name: string }).name)).size).toBe(STORE_MIGRATIONS.length);
    const again = await openStore(name);
    await again.migrate();
    expect(
      await again.db
        .selectFrom(STORE_MIGRATION_TABLE as never)
        .selectAll()
        .execute(),
    ).toHaveLength(STORE_MIGRATIONS.length);
  });
});

describe("opening while other schemas come and go", () => {
  test("a store migrates though other processes drop schemas meanwhile: it looks at its own schema only", async () => {
    let churning = true;
    const churn = withClient(async (client) => {
      // Another process's schemas, each with a table, created and dropped as fast as the server allows.
      while (churning) {
        const other = `${uniqueSchema()}_churn`;
        await client.query(`create schema ${pg.escapeIdentifier(other)}`);
        await client.query(`create table ${pg.escapeIdentifier(other)}.t (id int)`);
        await client.query(`drop schema ${pg.escapeIdentifier(other)} cascade`);
      }
    });
    try {
      for (let n = 0; n < 12; n += 1) {
        const store = await openStore(schema());
        expect(await store.pauses.findByTenantIdAndPauseId("acme", "none")).toBeUndefined();
      }
    } finally {
      churning = false;
      await churn;
    }
  });
  test("describes its own schema's tables and columns as kysely's introspector does", async () => {
    const name = schema();
    await openStore(name);
    const pool = new pg.Pool({ connectionString: TEST_URL, max: 1 });
    const scoped = new Kysely<unknown>({ dialect: new SchemaScopedPostgresDialect({ pool }, name) });
    const plain = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
    try {
      // kysely's own introspector reads every schema, and fails when another test drops one meanwhile
      // (the reason the store has its own): asked again then.
      const kyselys = (
        await readingEverySchema(() => plain.introspection.getTables({ withInternalKyselyTables: true }))
      )
        .filter((table) => table.schema === name)
        .sort((a, b) => a.name.localeCompare(b.name));
      const ours = await scoped.introspection.getTables({ withInternalKyselyTables: true });
      expect(kyselys.map((table) => table.name)).toContain("agboss_pauses");
      const shape = (tables: typeof ours) =>
        tables.map((table) => ({
          ...table,
          columns: table.columns
            .map(({ comment: _, dataTypeSchema: __, ...column }) => column)
            .sort((a, b) => a.name.localeCompare(b.name)),
        }));
      expect(shape([...ours].sort((a, b) => a.name.localeCompare(b.name)))).toEqual(shape(kyselys));
    } finally {
      await pool.end();
    }
  });
});

describe("PostgresStore", () => {
  afterEach(() => {
    delete process.env[POSTGRES_URL_ENV];
  });

  test("keeps its tables in its own schema, apart from another store's in the same database", async () => {
    const [one, two] = [schema(), schema()];
    const first = await openStore(one);
    const second = await openStore(two);
    await first.pauses.findOrCreate(pause({ pauseId: "only-here" }));
    expect(await first.pauses.findByTenantIdAndPauseId("acme", "only-here")).toBeDefined();
    expect(await second.pauses.findByTenantIdAndPauseId("acme", "only-here")).toBeUndefined();
    const tables = await withClient(async (client) => {
      const { rows } = await client.query<{ table_name: string }>(
        "select table_name from information_schema.tables where table_schema = $1 order by table_name",
        [one],
      );
      return rows.map((row) => row.table_name);
    });
    expect(tables).toEqual([
      "agboss_budget_ledger",
      "agboss_checkpoint_blobs",
      "agboss_checkpoint_writes",
      "agboss_checkpoints",
      "agboss_executions",
      "agboss_leases",
      "agboss_migration",
      "agboss_migration_lock",
      "agboss_pause_answers",
      "agboss_pauses",
      "agboss_threads",
    ]);
    expect(first.schema).toBe(one);
    const url = new URL(TEST_URL);
    expect(first.name).toBe(`postgres:${url.host}${url.pathname}#${one}`);
  });

  test("reads bigint columns as numbers and keeps checkpoint blobs as bytes", async () => {
    const store = await openStore(schema());
    await store.leases.acquire({ key: "tree", holder: "a", now: 2 ** 41, ttlMs: 30_000 });
    const [row] = await store.db.selectFrom("agboss_leases").select(["epoch", "expires_at"]).execute();
    expect(row).toEqual({ epoch: 1, expires_at: 2 ** 41 + 30_000 });

    const values = { messages: ["Grüße, 世界", { nested: [1, null, true] }], count: 2 ** 52 };
    const c = checkpoint(values);
    await store.checkpointer.put(checkpointConfig("bytes"), c, META, { messages: 1, count: 1 });
    const stored = await store.db
      .selectFrom("agboss_checkpoint_blobs")
      .select(["channel", "value"])
      .execute();
    expect(stored).toHaveLength(2);
    for (const blob of stored) expect(blob.value).toBeInstanceOf(Uint8Array);
    const back = await store.checkpointer.getTuple(checkpointConfig("bytes"));
    expect(back?.checkpoint.channel_values).toEqual(values);
  });

  test("runs on a pool it is given and leaves that pool open when it closes", async () => {
    const pool = new pg.Pool({ connectionString: TEST_URL, max: 2 });
    try {
      const name = schema();
      const store = await PostgresStore.open({ pool, schema: name });
      await store.leases.acquire({ key: "tree", holder: "a", now: 5, ttlMs: 10 });
      // The caller's pool has pg's own parsers: bigint arrives as text, and the store reads it anyway.
      expect((await store.leases.find("tree"))?.expiresAt).toBe(15);
      await store.close();
      const { rows } = await pool.query(`select epoch from ${pg.escapeIdentifier(name)}.agboss_leases`);
      expect(rows).toEqual([{ epoch: "1" }]);
    } finally {
      await pool.end();
    }
  });

  test("ends the pool it opened when it closes", async () => {
    const store = await PostgresStore.open({ connectionString: TEST_URL, schema: schema() });
    await store.close();
    await store.close();
    await expect(store.leases.find("tree")).rejects.toThrow();
  });

  test("postgresStore() reads AGBOSS_POSTGRES_URL and names the application's connections", async () => {
    process.env[POSTGRES_URL_ENV] = TEST_URL;
    const store = (await postgresStore({ schema: schema() })(context)) as PostgresStore;
    open.push(store);
    expect(store.name).toContain(new URL(TEST_URL).host);
    const { application_name } = (
      await withClient((client) =>
        client.query<{ application_name: string }>(
          "select distinct application_name from pg_stat_activity where application_name = 'agboss:refunds'",
        ),
      )
    ).rows[0] ?? { application_name: undefined };
    expect(application_name).toBe("agboss:refunds");
  });

  test("without a connection string, a pool or AGBOSS_POSTGRES_URL, open says what to set", async () => {
    const error = await PostgresStore.open({ schema: schema() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toContain("Set AGBOSS_POSTGRES_URL");
    expect((error as StoreUnavailableError).code).toBe("store.unavailable");
  });

  test("a server that cannot be reached fails the open with what to check", async () => {
    const error = await PostgresStore.open({
      connectionString: "postgres://agboss:secret@127.0.0.1:1/nowhere",
      connectTimeoutMs: 2_000,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(
      /^Could not connect to PostgreSQL at 127\.0\.0\.1:1\/nowhere: .+\. Check/,
    );
    expect((error as Error).message).not.toContain("secret");
  });

  test("refuses a schema name Postgres would shorten", async () => {
    await expect(PostgresStore.open({ connectionString: TEST_URL, schema: "s".repeat(64) })).rejects.toThrow(
      /1 to 63 bytes/,
    );
  });
});

describe("without row locks (why lockRowsForUpdate is on)", () => {
  test("a takeover would commit while a fenced write it supersedes is still in flight", async () => {
    const name = schema();
    const unlocked = new Kysely<AgbossDatabase>({
      dialect: new SchemaScopedPostgresDialect({ pool: new pg.Pool({ connectionString: TEST_URL }) }, name),
    });
    const a = new KyselyStore({
      db: unlocked,
      schema: name,
      // Transactions with an unlocked fence check: a one-statement write always locks the lease row.
      capabilities: { ...POSTGRES_CAPABILITIES, lockRowsForUpdate: false, writableCtes: false },
      name: "unlocked",
      onClose: () => unlocked.destroy(),
    });
    open.push(a);
    await a.migrate();
    const b = await openStore(name);
    const lease = (await a.leases.acquire({ key: "tree", holder: "a", now: 0, ttlMs: 10 }))!;
    const asked = await a.pauses.findOrCreate(pause(), lease);
    const blocker = new pg.Client({ connectionString: TEST_URL });
    await blocker.connect();
    try {
      await blocker.query("begin");
      await blocker.query(
        `select 1 from ${pg.escapeIdentifier(name)}.agboss_pauses where pause_id = $1 for update`,
        [asked.pauseId],
      );
      const write = a.pauses.markSent("acme", asked.pauseId, lease);
      await waitForLockWaits(name, 1);
      // Nothing holds the lease row: the new holder gets it while the old one's write is pending…
      expect((await b.leases.acquire({ key: "tree", holder: "b", now: 20, ttlMs: 10 }))?.epoch).toBe(2);
      await blocker.query("commit");
      // …and that write then lands under a lease that is no longer its own.
      expect((await write)?.isSent).toBe(true);
    } finally {
      await blocker.query("rollback").catch(() => undefined);
      await blocker.end();
    }
  });
});

/** Waits until `count` sessions wait for a lock in a statement that names `schema`. */
async function waitForLockWaits(schema: string, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const waiting = await withClient(async (client) => {
      const { rows } = await client.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity
          where wait_event_type = 'Lock' and strpos(query, $1) > 0`,
        [`"${schema}"`],
      );
      return rows[0]?.n ?? 0;
    });
    if (waiting >= count) return;
    if (Date.now() > deadline)
      throw new Error(`Only ${waiting} of ${count} sessions came to wait for a lock.`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** `read`, asked up to five times while it fails: it reads every schema, which other tests drop at will. */
async function readingEverySchema<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await read();
    } catch (error) {
      if (attempt >= 5) throw error;
    }
  }
}
