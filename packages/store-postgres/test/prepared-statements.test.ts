import { LeaseLostError, PauseStatus } from "@agboss/core";
import { type Fence, NO_CHECKPOINT_CONFIG_KEY } from "@agboss/core/store";
import pg from "pg";
import { afterAll, describe, expect, test } from "vitest";
import { POSTGRES_CAPABILITIES, PostgresStore } from "../src/index.js";
import { storeClientPool } from "../src/prepared-statements.js";
import { checkpoint, checkpointConfig, META, pause } from "./fixtures.js";
import { dropSchema, TEST_URL, uniqueSchema, withClient } from "./postgres-server.js";

const schemas: string[] = [];
const pools: pg.Pool[] = [];
afterAll(async () => {
  for (const pool of pools.splice(0)) await pool.end();
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

/** A store on a pool of one connection, so the test can look at that session's prepared statements. */
async function openOnOneConnection(preparedStatements?: boolean) {
  const schema = uniqueSchema();
  schemas.push(schema);
  const pool = new pg.Pool({ connectionString: TEST_URL, max: 1 });
  pools.push(pool);
  const store = await PostgresStore.open({
    pool,
    schema,
    ...(preparedStatements === undefined ? {} : { preparedStatements }),
  });
  const prepared = async () => {
    const { rows } = await pool.query<{ name: string; statement: string }>(
      "select name, statement from pg_prepared_statements where name like 'agboss%'",
    );
    return rows;
  };
  return { store, schema, prepared };
}

const thread = (threadId: string) => ({
  tenantId: "acme",
  threadId,
  ownerId: "owner-1",
  workflowName: "refund",
  latestExecutionId: "root-1",
  createdAt: 1_000,
  updatedAt: 1_000,
});

/**
 * A pool of `max` connections whose clients note each call the pool's users make: `note` turns its text,
 * and whether it came with a callback, into what is kept.
 */
function recordingPool<T>(max: number, note: (text: string, callback: boolean) => T) {
  const calls: T[] = [];
  class RecordingClient extends pg.Client {
    // biome-ignore lint/suspicious/noExplicitAny: pg's query has many overloads; the test passes them on.
    override query(config: any, values?: any, callback?: any): any {
      const text = typeof config === "string" ? config : String(config?.text ?? "");
      calls.push(note(text, typeof callback === "function" || typeof values === "function"));
      return super.query(config, values, callback);
    }
  }
  const pool = new pg.Pool({ connectionString: TEST_URL, max, Client: RecordingClient });
  pools.push(pool);
  return { pool, calls };
}

/** A call's text as it was sent. */
const wholeText = (text: string) => text;
/** A call's first word (`begin`, `with`, `commit`, …). */
const firstWord = (text: string) => text.trim().split(/\s+/, 1)[0]?.toLowerCase() ?? "";

/** A store in a schema of its own on a recording pool of one connection (see {@link recordingPool}). */
async function openOnRecordedConnection<T>(note: (text: string) => T, preparedStatements?: boolean) {
  const { pool, calls } = recordingPool(1, note);
  const schema = uniqueSchema();
  schemas.push(schema);
  const store = await PostgresStore.open({
    pool,
    schema,
    ...(preparedStatements === undefined ? {} : { preparedStatements }),
  });
  return { store, schema, pool, calls };
}

describe("prepared statements on Postgres", () => {
  test("the store's statements are prepared once per connection and then only run", async () => {
    const { store, prepared } = await openOnOneConnection();
    await store.threads.save(thread("t-1"));
    expect(await store.threads.findByTenantIdAndThreadId("acme", "t-1")).toMatchObject({ threadId: "t-1" });
    const once = await prepared();
    const lookup = once.filter((row) => /"agboss_threads" where/.test(row.statement));
    expect(lookup).toHaveLength(1);

    // The same lookup again, for other arguments: still one prepared statement of its text.
    await store.threads.save(thread("t-2"));
    expect(await store.threads.findByTenantIdAndThreadId("acme", "t-2")).toMatchObject({ threadId: "t-2" });
    const twice = await prepared();
    expect(twice.filter((row) => /"agboss_threads" where/.test(row.statement))).toEqual(lookup);
    expect(twice.length).toBe(once.length);
    await store.close();
  });

  test("two stores on one pool each run their own statements: no name is given two texts", async () => {
    const pool = new pg.Pool({ connectionString: TEST_URL, max: 1 });
    pools.push(pool);
    const first = uniqueSchema();
    const second = uniqueSchema();
    schemas.push(first, second);
    const a = await PostgresStore.open({ pool, schema: first });
    const b = await PostgresStore.open({ pool, schema: second });
    for (const [store, threadId] of [
      [a, "t-a"],
      [b, "t-b"],
      [a, "t-a2"],
      [b, "t-b2"],
    ] as const) {
      await store.threads.save(thread(threadId));
      expect(await store.threads.findByTenantIdAndThreadId("acme", threadId)).toMatchObject({ threadId });
    }
    expect(await a.threads.findByTenantIdAndThreadId("acme", "t-b")).toBeUndefined();
    await a.close();
    await b.close();
  });

  test("what the application runs itself on the pool's clients is not prepared", async () => {
    const { store, prepared } = await openOnOneConnection();
    const before = await prepared();
    // Most of the store's statements are named now; the application's own call on the same connection is not.
    const pool = pools.at(-1) as pg.Pool;
    const client = await pool.connect();
    try {
      await client.query("select $1::text as echo", ["from the application"]);
    } finally {
      client.release();
    }
    const after = await prepared();
    expect(after.some((row) => row.statement.includes("from the application"))).toBe(false);
    expect(after.some((row) => row.statement.includes("$1::text as echo"))).toBe(false);
    expect(after.length).toBe(before.length);
    await store.close();
  });

  test("with preparedStatements: false nothing is prepared (for a pooler that does not keep them)", async () => {
    const { store, prepared } = await openOnOneConnection(false);
    await store.threads.save(thread("t-1"));
    expect(await store.threads.findByTenantIdAndThreadId("acme", "t-1")).toMatchObject({ threadId: "t-1" });
    expect(await prepared()).toEqual([]);
    await store.close();
  });

  test("a column added under a prepared `select *` costs one retry, not an error", async () => {
    const { store, schema } = await openOnOneConnection();
    await store.threads.save(thread("t-1"));
    expect(await store.threads.findByTenantIdAndThreadId("acme", "t-1")).toMatchObject({ threadId: "t-1" });
    // What a newer version's migration does while this process runs.
    await withClient((client) =>
      client.query(`alter table "${schema}".agboss_threads add column extra text`),
    );
    expect(await store.threads.findByTenantIdAndThreadId("acme", "t-1")).toMatchObject({ threadId: "t-1" });
    expect(await store.threads.findByTenantIdAndThreadId("acme", "t-1")).toMatchObject({ threadId: "t-1" });
    await store.close();
  });
});

describe("how the store hands its statements to pg", () => {
  for (const preparedStatements of [true, false]) {
    test(`with preparedStatements: ${preparedStatements}, every statement of the store goes with a callback, never as pg's own promise (which kept pages of rows alive through young collections)`, async () => {
      const { pool, calls } = recordingPool(2, (text, callback) => ({ text, callback }));
      const schema = uniqueSchema();
      schemas.push(schema);
      const store = await PostgresStore.open({ pool, schema, preparedStatements });
      calls.splice(0);
      await store.threads.save(thread("t-1"));
      expect(await store.threads.findByTenantIdAndThreadId("acme", "t-1")).toMatchObject({ threadId: "t-1" });
      expect(await store.executions.listByStatus(["running"], 100)).toEqual([]);
      expect(calls.length).toBeGreaterThan(2);
      expect(calls.filter((call) => !call.callback)).toEqual([]);
      // The application's own calls on the pool are its business: pg's promise is left to it.
      await pool.query("select 1");
      await store.close();
    });
  }
});

describe("a new thread's checkpoint is not read", () => {
  test("a read the runtime says finds no checkpoint (a start on a new thread) makes no call; other reads of the thread do", async () => {
    const { store, calls } = await openOnRecordedConnection(firstWord);
    const fence = (await store.leases.acquire({
      key: "acme/t-new",
      holder: "a",
      now: Date.now(),
      ttlMs: 60_000,
    })) as Fence;
    await store.checkpointer.put(checkpointConfig("t-new", fence), checkpoint({ step: 1 }), META, {
      step: 1,
    });
    await store.checkpointer.getTuple(checkpointConfig("t-new"));
    calls.splice(0);
    const none = {
      configurable: { thread_id: "t-new", checkpoint_ns: "", [NO_CHECKPOINT_CONFIG_KEY]: true },
    };
    expect(await store.checkpointer.getTuple(none)).toBeUndefined();
    expect(calls).toEqual([]);
    // Only the latest checkpoint of the root namespace: a subgraph's namespace, or a checkpoint named by
    // its id, is read.
    const sub = { configurable: { ...none.configurable, checkpoint_ns: "node:task-1" } };
    expect(await store.checkpointer.getTuple(sub)).toBeUndefined();
    expect(calls).toEqual(["with"]);
    await store.close();
  });
});

describe("a transaction's begin goes with its first statement", () => {
  /** A store on a pool of one connection whose client notes the text of every call the store makes. */
  async function openRecorded(preparedStatements?: boolean) {
    const { store, schema, calls } = await openOnRecordedConnection(wholeText, preparedStatements);
    // What opening ran (the migrations' own transaction) is not what these tests look at.
    calls.splice(0);
    const begins = () => calls.filter((text) => text.startsWith("begin"));
    const count = async (threadId: string) =>
      (await withClient((client) =>
        client.query(`select count(*)::int as n from "${schema}".agboss_threads where thread_id = $1`, [
          threadId,
        ]),
      )) as { rows: { n: number }[] };
    const stored = async (threadId: string) => ((await count(threadId)).rows[0]?.n ?? 0) === 1;
    return { store, schema, calls, begins, stored };
  }

  test("after the first transaction on a connection, no begin travels alone: the transaction is one round trip shorter", async () => {
    const { store, calls, begins } = await openRecorded();
    await store.atomically(async () => {
      await store.threads.findByTenantIdAndThreadId("acme", "t-1");
      await store.threads.save(thread("t-1"));
    });
    // The first one prepares the begin on the connection and waits for it.
    expect(begins()).toHaveLength(1);
    calls.splice(0);
    await store.atomically(async () => {
      await store.threads.findByTenantIdAndThreadId("acme", "t-2");
      await store.threads.save(thread("t-2"));
      await store.threads.save(thread("t-3"));
    });
    expect(begins()).toEqual([]);
    // The read carries the begin; the saves, whose results nobody reads, go with the commit.
    expect(calls).toHaveLength(2);
    expect(calls[0]).toContain("agboss_threads");
    expect(calls.at(-1)).toBe("commit");
    for (const threadId of ["t-1", "t-2", "t-3"]) {
      expect(await store.threads.findByTenantIdAndThreadId("acme", threadId)).toMatchObject({ threadId });
    }
    await store.close();
  });

  test("the first statement runs inside the transaction: unseen by others until the commit, gone with a rollback", async () => {
    const { store, stored } = await openRecorded();
    await store.atomically(async () => store.threads.save(thread("warm-up")));
    let seenMeanwhile: boolean | undefined;
    await store.atomically(async () => {
      await store.threads.save(thread("t-1"));
      seenMeanwhile = await stored("t-1");
    });
    expect(seenMeanwhile).toBe(false);
    expect(await stored("t-1")).toBe(true);

    // A unit that throws after its first write: had that write run outside the transaction, it would stay.
    await expect(
      store.atomically(async () => {
        await store.threads.save(thread("t-2"));
        throw new Error("the unit fails after its first write");
      }),
    ).rejects.toThrow("the unit fails after its first write");
    expect(await stored("t-2")).toBe(false);
    await store.close();
  });

  test("a transaction with no statement sends nothing at all", async () => {
    const { store, calls } = await openRecorded();
    await store.atomically(async () => store.threads.save(thread("warm-up")));
    calls.splice(0);
    expect(await store.atomically(async () => "nothing written")).toBe("nothing written");
    expect(calls).toEqual([]);
    // And the connection holds no transaction afterwards: the next one commits as usual.
    await store.atomically(async () => store.threads.save(thread("t-1")));
    expect(await store.threads.findByTenantIdAndThreadId("acme", "t-1")).toMatchObject({ threadId: "t-1" });
    await store.close();
  });

  test("a first statement the server refuses fails its caller and leaves the connection with no transaction open", async () => {
    const { store, schema, stored } = await openRecorded();
    await store.atomically(async () => store.threads.save(thread("warm-up")));
    // The thread table gone for a moment: the server refuses the statement as it parses it.
    await withClient((client) =>
      client.query(`alter table "${schema}".agboss_threads rename to threads_away`),
    );
    await expect(store.atomically(async () => store.threads.save(thread("t-1")))).rejects.toThrow(
      /agboss_threads/,
    );
    await withClient((client) =>
      client.query(`alter table "${schema}".threads_away rename to agboss_threads`),
    );
    await store.atomically(async () => store.threads.save(thread("t-2")));
    expect(await stored("t-1")).toBe(false);
    expect(await stored("t-2")).toBe(true);
    await store.close();
  });

  test("with preparedStatements: false the begin goes on its own, as before", async () => {
    const { store, begins, stored } = await openRecorded(false);
    await store.atomically(async () => store.threads.save(thread("t-1")));
    await store.atomically(async () => store.threads.save(thread("t-2")));
    expect(begins()).toHaveLength(2);
    await expect(
      store.atomically(async () => {
        await store.threads.save(thread("t-3"));
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(await stored("t-3")).toBe(false);
    await store.close();
  });
});

describe("a pass transaction's closing statement carries its commit", () => {
  /** A store on one connection whose calls are noted by their first word, and a lease on it. */
  async function openPass(preparedStatements?: boolean) {
    const { store, schema, pool, calls } = await openOnRecordedConnection(firstWord, preparedStatements);
    const fence = (await store.leases.acquire({
      key: "acme/pass",
      holder: "a",
      now: Date.now(),
      ttlMs: 60_000,
    })) as Fence;
    const asked = await store.pauses.findOrCreate(pause({ threadId: "t-pass" }), fence);
    /** A pass: a checkpoint under the fence, then marking the pause sent, which closes it. */
    const pass = Object.assign(
      async (step: number) => {
        await store.checkpointer.put(checkpointConfig("t-pass", fence), checkpoint({ step }), META, { step });
        await store.pauses.markSent("acme", asked.pauseId, fence);
      },
      { asked: async () => asked },
    );
    const stored = async () => {
      const { rows } = await pool.query<{ n: number }>(
        `select count(*)::int as n from "${schema}".agboss_checkpoints where thread_id = 't-pass'`,
      );
      return rows[0]?.n ?? 0;
    };
    /** Another holder takes the pass's lease over: its epoch moves on. */
    const takeOver = () =>
      withClient((client) =>
        client.query(`update "${schema}".agboss_leases set epoch = epoch + 1 where key = 'acme/pass'`),
      );
    return { store, fence, asked, calls, pass, stored, pool, schema, takeOver };
  }

  test("once the connection has begin and commit prepared, a pass is one round trip: its checkpoint goes in front of its closing write, and the commit behind it", async () => {
    const { store, calls, pass, stored, pool, asked } = await openPass();
    // The first passes on the connection prepare its begin, commit and statements on the way.
    await pass(1);
    await pass(2);
    calls.splice(0);
    await pass(3);
    expect(calls).toEqual(["with"]);
    // What the pass wrote is committed: the connection holds no open transaction that wrote.
    expect(await stored()).toBe(3);
    const { rows } = await pool.query<{ xid: string | null }>("select txid_current_if_assigned() as xid");
    expect(rows[0]?.xid).toBeNull();
    expect((await store.pauses.findByTenantIdAndPauseId("acme", asked.pauseId))?.isSent).toBe(true);
    await store.close();
  });

  test("asking a pause closes a pass the same way: the fenced pause is one statement that carries the checkpoint in front and the commit behind", async () => {
    const { store, fence, calls, pass, stored } = await openPass();
    await pass(1);
    await pass(2);
    calls.splice(0);
    await store.checkpointer.put(checkpointConfig("t-pass", fence), checkpoint({ step: 3 }), META, {
      step: 3,
    });
    const asked = await store.pauses.findOrCreate(pause({ threadId: "t-pass" }), fence);
    expect(calls).toEqual(["with"]);
    expect(await stored()).toBe(3);
    expect(await store.pauses.findByTenantIdAndPauseId("acme", asked.pauseId)).toEqual(asked);
    await store.close();
  });

  test("a pass's checkpoint writes go with its next statement: three checkpoints, pending writes and the closing write are one round trip", async () => {
    const { store, fence, calls, pass, stored, pool, schema } = await openPass();
    // Two passes prepare every statement the third runs (the later writes' own, unfenced one included).
    await pass(1);
    await store.checkpointer.put(checkpointConfig("t-pass", fence), checkpoint({ step: 2 }), META, {
      step: 2,
    });
    await store.checkpointer.putWrites(
      { configurable: { ...checkpointConfig("t-pass", fence).configurable, checkpoint_id: "x" } },
      [["messages", { n: 1 }]],
      "task-1",
    );
    await pass(3);
    calls.splice(0);
    const config = checkpointConfig("t-pass", fence);
    for (const step of [4, 5, 6]) {
      await store.checkpointer.put(config, checkpoint({ step }), META, { step });
    }
    await store.checkpointer.putWrites(
      { configurable: { ...config.configurable, checkpoint_id: "y" } },
      [["messages", { n: 2 }]],
      "task-2",
    );
    // The first checks the fence (and locks the lease row for share until the commit), refusing the
    // batch if it no longer holds; the later ones need not; the closing write carries the four in front
    // of it and the commit behind it.
    expect(await store.pauses.markSent("acme", (await pass.asked()).pauseId, fence)).toBeDefined();
    expect(calls).toEqual(["with"]);
    expect(await stored()).toBe(6);
    const { rows } = await pool.query<{ n: number }>(
      `select count(*)::int as n from "${schema}".agboss_checkpoint_writes where checkpoint_id = 'y'`,
    );
    expect(rows[0]?.n).toBe(1);
    await store.close();
  });

  test("a later checkpoint write the server refuses fails its pass: the writes before it are not committed and the holder's next writes are refused", async () => {
    const { store, fence, pass, stored, pool, schema } = await openPass();
    const config = checkpointConfig("t-pass", fence);
    const asked = await pass.asked();
    // A pass of two checkpoints prepares the later writes' statement on the connection.
    const first = checkpoint({ step: 1 });
    const second = checkpoint({ step: 2 });
    await Promise.all([
      store.checkpointer.put(config, first, META, { step: 1 }),
      store.checkpointer.put(config, second, META, { step: 2 }),
      store.pauses.markSent("acme", asked.pauseId, fence),
    ]);
    await pool.query(
      `alter table "${schema}".agboss_checkpoints add constraint no_refused check (checkpoint_id not like 'refused%')`,
    );
    // Issued together, as the graph does, so they share one pass transaction. The refused one is neither
    // checked nor sent when it resolves, as an applied write may resolve before its commit.
    const [third, refused] = await Promise.allSettled([
      store.checkpointer.put(config, checkpoint({ step: 3 }), META, { step: 3 }),
      store.checkpointer.put(config, { ...checkpoint({ step: 4 }), id: "refused-4" }, META, { step: 4 }),
    ]);
    expect([third.status, refused.status]).toEqual(["fulfilled", "fulfilled"]);
    // A read waits for the pass: its commit failed, and nothing of it was kept.
    expect((await store.checkpointer.getTuple(config))?.checkpoint.id).toBe(second.id);
    expect(await stored()).toBe(2);
    await expect(
      store.checkpointer.put(config, checkpoint({ step: 5 }), META, { step: 5 }),
    ).rejects.toMatchObject({ name: "StoreUnavailableError", cause: { code: "23514" } });
    await expect(store.pauses.markSent("acme", asked.pauseId, fence)).rejects.toMatchObject({
      name: "StoreUnavailableError",
    });
    await store.close();
  });

  test("a later checkpoint write refused in front of the pass's next write fails the pass there: the next write is not to blame, and nothing runs again", async () => {
    const { store, fence, pass, stored, pool, schema, calls } = await openPass();
    const config = checkpointConfig("t-pass", fence);
    const asked = await pass.asked();
    await Promise.all([
      store.checkpointer.put(config, checkpoint({ step: 1 }), META, { step: 1 }),
      store.checkpointer.put(config, checkpoint({ step: 2 }), META, { step: 2 }),
      store.pauses.markSent("acme", asked.pauseId, fence),
    ]);
    await pool.query(
      `alter table "${schema}".agboss_checkpoints add constraint no_refused check (checkpoint_id not like 'refused%')`,
    );
    calls.splice(0);
    const results: PromiseSettledResult<unknown>[] = await Promise.allSettled([
      store.checkpointer.put(config, checkpoint({ step: 3 }), META, { step: 3 }),
      store.checkpointer.put(config, { ...checkpoint({ step: 4 }), id: "refused-4" }, META, { step: 4 }),
    ]);
    // Asked as they resolve, before the pass's turn is up: its statement (which reads what it stored)
    // carries the refused one in front, and the server skips it.
    results.push(
      ...(await Promise.allSettled([store.pauses.findOrCreate(pause({ threadId: "t-pass" }), fence)])),
    );
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "fulfilled", "rejected"]);
    expect(results[2]).toMatchObject({ reason: { code: "23514" } });
    // The pass's own read is refused (its writes were lost); anyone else's waits for the pass to end:
    // the thread's checkpoint is the last one committed.
    await expect(store.checkpointer.getTuple(config)).rejects.toMatchObject({
      name: "StoreUnavailableError",
    });
    expect(
      (await store.checkpointer.getTuple(checkpointConfig("t-pass")))?.checkpoint.channel_values,
    ).toEqual({ step: 2 });
    // The pause with the three in front, the rollback, and the read: the pass is not run again to find
    // out whose error it was.
    expect(calls).toEqual(["with", "rollback", "with"]);
    expect(await stored()).toBe(2);
    await expect(store.pauses.markSent("acme", asked.pauseId, fence)).rejects.toMatchObject({
      name: "StoreUnavailableError",
    });
    await store.close();
  });

  test("a pass waits a little for its next write: a closing write that comes a moment later carries the commit; with none, the pass commits on its own", async () => {
    const { store, fence, calls, pass, stored } = await openPass();
    await pass(1);
    await pass(2);
    calls.splice(0);
    const config = checkpointConfig("t-pass", fence);
    await store.checkpointer.put(config, checkpoint({ step: 3 }), META, { step: 3 });
    // What a pass does before its closing write when it comes to rest: reads, elsewhere, for a moment.
    await new Promise((resolve) => setTimeout(resolve, 1));
    await store.pauses.markSent("acme", (await pass.asked()).pauseId, fence);
    expect(calls).toEqual(["with"]);
    expect(await stored()).toBe(3);
    calls.splice(0);
    await store.checkpointer.put(config, checkpoint({ step: 4 }), META, { step: 4 });
    // Nothing follows: the write, held until now, goes with the pass's own commit.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(calls).toEqual(["commit"]);
    expect(await stored()).toBe(4);
    await store.close();
  });

  test("a take closes a pass the same way: the change that may not run twice carries the checkpoint in front and the commit behind", async () => {
    const { store, fence, calls, pass, stored } = await openPass();
    await pass(1);
    await pass(2);
    const answered = await store.pauses.findOrCreate(pause({ threadId: "t-take" }), fence);
    await store.pauses.resolve("acme", answered.pauseId, { decision: { approved: true } }, 2_000);
    calls.splice(0);
    await store.checkpointer.put(checkpointConfig("t-pass", fence), checkpoint({ step: 3 }), META, {
      step: 3,
    });
    const taken = await store.pauses.take("acme", answered.pauseId, { at: 3_000 }, fence);
    expect(taken?.status).toBe(PauseStatus.Taken);
    expect(calls).toEqual(["with"]);
    expect(await stored()).toBe(3);
    expect((await store.pauses.findByTenantIdAndPauseId("acme", answered.pauseId))?.status).toBe(
      PauseStatus.Taken,
    );
    await store.close();
  });

  test("a pass's first checkpoint write whose fence was lost refuses the closing write it went with: LeaseLostError, nothing of the pass kept, later writes refused", async () => {
    const { store, fence, calls, pass, stored, takeOver } = await openPass();
    await pass(1);
    await pass(2);
    const asked = await pass.asked();
    // Another holder takes the lease over.
    await takeOver();
    calls.splice(0);
    // Sent with the pass's next statement, it resolves at once: its fence is checked there.
    await store.checkpointer.put(checkpointConfig("t-pass", fence), checkpoint({ step: 3 }), META, {
      step: 3,
    });
    expect(calls).toEqual([]);
    await expect(store.pauses.markSent("acme", asked.pauseId, fence)).rejects.toBeInstanceOf(LeaseLostError);
    expect(calls).toEqual(["with", "rollback"]);
    expect(await stored()).toBe(2);
    await expect(
      store.checkpointer.put(checkpointConfig("t-pass", fence), checkpoint({ step: 4 }), META, { step: 4 }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await stored()).toBe(2);
    await store.close();
  });

  test("a pass's first checkpoint write whose fence was lost, committed for a read: the read finds it gone, and the holder's next write is refused as lease lost", async () => {
    const { store, fence, pass, stored, takeOver } = await openPass();
    await pass(1);
    await pass(2);
    const asked = await pass.asked();
    await takeOver();
    // Issued together, as the graph does: the first checks the fence where it is sent; the second, behind
    // it in the same transaction, need not.
    // (The second's statement is not prepared yet: it goes at once, with the first in front, and is
    // refused there.)
    const config = checkpointConfig("t-pass", fence);
    const puts = await Promise.allSettled([
      store.checkpointer.put(config, checkpoint({ step: 3 }), META, { step: 3 }),
      store.checkpointer.put(config, checkpoint({ step: 4 }), META, { step: 4 }),
    ]);
    expect(puts[0]?.status).toBe("fulfilled");
    if (puts[1]?.status === "rejected") expect(puts[1].reason).toBeInstanceOf(LeaseLostError);
    // The read commits the pass first: the server refuses the first write there, the second with it,
    // and the read goes on.
    const latest = await store.checkpointer.getTuple(checkpointConfig("t-pass"));
    expect(latest?.checkpoint.channel_values).toEqual({ step: 2 });
    expect(await stored()).toBe(2);
    await expect(store.pauses.markSent("acme", asked.pauseId, fence)).rejects.toBeInstanceOf(LeaseLostError);
    await store.close();
  });

  test("the commit is really sent: another connection sees the pass's writes as soon as its closing write resolves", async () => {
    const { store, pass, schema } = await openPass();
    await pass(1);
    await pass(2);
    const seen = await withClient(async (client) => {
      const { rows } = await client.query<{ n: number }>(
        `select count(*)::int as n from "${schema}".agboss_checkpoints where thread_id = 't-pass'`,
      );
      return rows[0]?.n;
    });
    expect(seen).toBe(2);
    await store.close();
  });

  test("with preparedStatements: false, the commit goes on its own after the closing write", async () => {
    const { store, calls, pass, schema } = await openPass(false);
    await pass(1);
    calls.splice(0);
    await pass(2);
    expect(calls).toEqual(["begin", "with", "with", "commit"]);
    const seen = await withClient(async (client) => {
      const { rows } = await client.query<{ n: number }>(
        `select count(*)::int as n from "${schema}".agboss_checkpoints where thread_id = 't-pass'`,
      );
      return rows[0]?.n;
    });
    expect(seen).toBe(2);
    await store.close();
  });
});

/** A row of the view tests' table (`n` for their counts). */
type NoteRow = { id: number; note: string; n?: number };

/**
 * The store's view of a recording pool of one connection, a table of its own to write to, and the
 * statements the view tests run on it.
 */
async function openNotesView() {
  const { pool, calls } = recordingPool(1, wholeText);
  const schema = uniqueSchema();
  schemas.push(schema);
  const table = `"${schema}".notes`;
  await withClient(async (client) => {
    await client.query(`create schema "${schema}"`);
    await client.query(`create table ${table} (id int primary key, note text not null)`);
  });
  const view = storeClientPool(pool as never, {
    prepared: true,
    begin: POSTGRES_CAPABILITIES.beginWriteTransaction,
    commitWithNext: POSTGRES_CAPABILITIES.commitWithNextStatement as string,
    deferUnread: POSTGRES_CAPABILITIES.deferUnreadStatement as string,
  });
  const connect = async () =>
    (await view.connect()) as unknown as {
      query(text: string, values: unknown[]): Promise<pg.QueryResult<NoteRow>>;
      release(): void;
    };
  const insert = `insert into ${table} (id, note) values ($1, $2) returning id, note`;
  /** An insert that returns no rows, which the store would mark as unread. */
  const write = `insert into ${table} (id, note) values ($1, $2)`;
  const count = `select count(*)::int as n from ${table} where id = $1`;
  /** Whether another connection sees the row: it was committed, or written outside a transaction. */
  const seen = async (id: number) =>
    withClient(async (client) => {
      const { rows } = await client.query<{ n: number }>(count, [id]);
      return rows[0]?.n === 1;
    });
  /**
   * One transaction through the view, so the connection has its begin, its commit and the statements
   * the tests run prepared (a write with `id`, a count, another write with `id + 1000`).
   */
  const warm = async (id: number) => {
    const client = await connect();
    await client.query(POSTGRES_CAPABILITIES.beginWriteTransaction, []);
    await client.query(insert, [id, "warm"]);
    await client.query(write, [id + 1000, "warm"]);
    await client.query(count, [id]);
    await client.query("commit", []);
    client.release();
  };
  return { pool, connect, insert, write, count, seen, warm, table, calls };
}

describe("the pool view's batches, one connection", () => {
  const BEGIN = POSTGRES_CAPABILITIES.beginWriteTransaction;
  const CARRY = POSTGRES_CAPABILITIES.commitWithNextStatement as string;
  const openView = openNotesView;

  test("the first statement of a transaction answers with its own result, not the begin's", async () => {
    const { connect, insert, seen, warm } = await openView();
    await warm(1);
    const client = await connect();
    expect(await client.query(BEGIN, [])).toMatchObject({ command: "BEGIN" });
    const result = await client.query(insert, [2, "second"]);
    expect(result.command).toBe("INSERT");
    expect(result.rowCount).toBe(1);
    expect(result.rows).toEqual([{ id: 2, note: "second" }]);
    expect(await seen(2)).toBe(false);
    await client.query("commit", []);
    client.release();
    expect(await seen(2)).toBe(true);
  });

  test("a begin not yet sent when its connection goes back to the pool does not open a transaction for the next borrower", async () => {
    const { connect, insert, seen, warm } = await openView();
    await warm(1);
    const first = await connect();
    await first.query(BEGIN, []);
    first.release();
    const next = await connect();
    await next.query(insert, [2, "autocommit"]);
    // No transaction around it: another connection sees it at once.
    expect(await seen(2)).toBe(true);
    next.release();
  });

  test("a first statement without parameters waits for its begin, sent on its own, and runs inside the transaction", async () => {
    const { connect, seen, warm, table } = await openView();
    await warm(1);
    const client = await connect();
    await client.query(BEGIN, []);
    await client.query(`insert into ${table} (id, note) values (3, 'no parameters')`, []);
    expect(await seen(3)).toBe(false);
    await client.query("rollback", []);
    expect(await seen(3)).toBe(false);
    client.release();
  });

  test("a closing statement carries the commit: the transaction is committed when it answers, and the commit after it is answered locally", async () => {
    const { connect, insert, seen, warm, table, calls } = await openView();
    await warm(1);
    const client = await connect();
    await client.query(BEGIN, []);
    await client.query(insert, [2, "carried"]);
    await client.query(CARRY, []);
    expect((await client.query(insert, [3, "closing"])).rows).toEqual([{ id: 3, note: "closing" }]);
    expect(await seen(2)).toBe(true);
    expect(await seen(3)).toBe(true);
    // A read the closing write makes after it runs on its own; the pass's commit then needs no server.
    expect((await client.query(`select note from ${table} where id = $1`, [3])).rows).toEqual([
      { note: "closing" },
    ]);
    const before = calls.length;
    expect(await client.query("commit", [])).toMatchObject({ command: "COMMIT" });
    expect(calls.length).toBe(before);
    client.release();
  });

  test("a closing statement the server refuses is not committed, nor is anything before it", async () => {
    const { connect, insert, seen, warm } = await openView();
    await warm(1);
    const client = await connect();
    await client.query(BEGIN, []);
    await client.query(insert, [2, "before"]);
    await client.query(CARRY, []);
    // The same key again: the insert fails, and the commit behind it is skipped.
    await expect(client.query(insert, [2, "again"])).rejects.toMatchObject({ code: "23505" });
    await client.query("rollback", []);
    expect(await seen(2)).toBe(false);
    client.release();
  });

  test("prepared statements dropped under the connection: the transaction that meets it runs nothing, and the next prepares them again", async () => {
    const { pool, connect, insert, seen, warm } = await openView();
    await warm(1);
    // What an application's `DISCARD ALL` on the same connection does.
    const raw = await pool.connect();
    await raw.query("deallocate all");
    raw.release();
    const client = await connect();
    await client.query(BEGIN, []);
    await expect(client.query(insert, [2, "refused"])).rejects.toMatchObject({ code: "26000" });
    await client.query("rollback", []);
    expect(await seen(2)).toBe(false);
    await client.query(BEGIN, []);
    await client.query(insert, [3, "prepared again"]);
    await client.query("commit", []);
    expect(await seen(3)).toBe(true);
    client.release();
  });
});

describe("a write whose result nobody reads goes with the transaction's next statement", () => {
  const BEGIN = POSTGRES_CAPABILITIES.beginWriteTransaction;
  const UNREAD = POSTGRES_CAPABILITIES.deferUnreadStatement as string;

  /** The view, warmed by one transaction (row 1 is there, every statement prepared), calls forgotten. */
  async function openView() {
    const view = await openNotesView();
    await view.warm(1);
    view.calls.splice(0);
    return view;
  }

  test("an unread write answers at once and goes in the commit's round trip, which commits it", async () => {
    const { connect, write, count, seen, calls } = await openView();
    const client = await connect();
    await client.query(BEGIN, []);
    await client.query(count, [2]);
    expect(calls).toHaveLength(1);
    expect((await client.query(UNREAD + write, [2, "unread"])).rows).toEqual([]);
    // Nothing went to the server for it yet.
    expect(calls).toHaveLength(1);
    expect(await seen(2)).toBe(false);
    expect(await client.query("commit", [])).toMatchObject({ command: "COMMIT" });
    expect(calls).toHaveLength(2);
    expect(await seen(2)).toBe(true);
    client.release();
  });

  test("an unread write goes in front of the next statement, in its round trip, and that statement sees it", async () => {
    const { connect, write, count, seen, calls } = await openView();
    const client = await connect();
    await client.query(BEGIN, []);
    await client.query(UNREAD + write, [2, "unread"]);
    expect(calls).toHaveLength(0);
    // The begin, the held write and the count: one round trip, the count's own result.
    expect((await client.query(count, [2])).rows).toEqual([{ n: 1 }]);
    expect(calls).toHaveLength(1);
    expect(await seen(2)).toBe(false);
    await client.query("commit", []);
    expect(calls).toHaveLength(2);
    expect(await seen(2)).toBe(true);
    client.release();
  });

  test("an unread write the server refuses fails the commit it went with, and nothing of its transaction is committed", async () => {
    const { connect, write, count, seen } = await openView();
    const client = await connect();
    await client.query(BEGIN, []);
    await client.query(write, [2, "before"]);
    // Row 1 is there already: the write fails, and the commit behind it is skipped.
    await client.query(UNREAD + write, [1, "again"]);
    await expect(client.query("commit", [])).rejects.toMatchObject({ code: "23505" });
    await client.query("rollback", []);
    expect(await seen(2)).toBe(false);
    // The connection goes on as before.
    await client.query(BEGIN, []);
    await client.query(UNREAD + write, [3, "after"]);
    await client.query("commit", []);
    expect(await seen(3)).toBe(true);
    expect((await client.query(count, [3])).rows).toEqual([{ n: 1 }]);
    client.release();
  });

  test("an unread write the server refuses fails the statement it went with, not later ones", async () => {
    const { connect, write, count, seen } = await openView();
    const client = await connect();
    await client.query(BEGIN, []);
    await client.query(UNREAD + write, [1, "again"]);
    await expect(client.query(count, [1])).rejects.toMatchObject({ code: "23505" });
    await client.query("rollback", []);
    await client.query(BEGIN, []);
    await client.query(write, [4, "next transaction"]);
    await client.query("commit", []);
    expect(await seen(4)).toBe(true);
    client.release();
  });

  test("an unread write the server refuses in front of a statement without parameters fails it, marked as the held write's error", async () => {
    const { connect, write, seen, table } = await openView();
    const client = await connect();
    await client.query(BEGIN, []);
    await client.query(UNREAD + write, [1, "again"]);
    const error = await client
      .query(`select count(*)::int as n from ${table}`, [])
      .catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: "23505" });
    // The mark that tells a pass the statement it went with is not to blame (see `markHeldRefused`).
    expect((error as Record<symbol, unknown>)[Symbol.for("agboss.held-statement-refused")]).toBe(true);
    await client.query("rollback", []);
    expect(await seen(1)).toBe(true);
    client.release();
  });

  test("a rollback drops an unread write without sending it", async () => {
    const { connect, write, count, seen, calls } = await openView();
    const client = await connect();
    await client.query(BEGIN, []);
    await client.query(count, [5]);
    await client.query(UNREAD + write, [5, "dropped"]);
    await client.query("rollback", []);
    expect(calls).toEqual([count, "rollback"]);
    expect(await seen(5)).toBe(false);
    client.release();
  });

  test("a commit the server answers with ROLLBACK is an error: a statement had failed, its caller went on, and nothing was kept", async () => {
    const { connect, write, seen } = await openView();
    const client = await connect();
    await client.query(BEGIN, []);
    await client.query(write, [2, "kept?"]);
    await expect(client.query(write, [1, "again"])).rejects.toMatchObject({ code: "23505" });
    // Said as such, with the refusal that caused it.
    await expect(client.query("commit", [])).rejects.toMatchObject({
      code: "25P02",
      message: expect.stringContaining("duplicate key"),
      cause: { code: "23505" },
    });
    expect(await seen(2)).toBe(false);
    await client.query("rollback", []);
    await client.query(BEGIN, []);
    await client.query(write, [3, "next"]);
    await client.query("commit", []);
    expect(await seen(3)).toBe(true);
    client.release();
  });

  test("an unread write is not held back when it is to carry the commit: it runs, committed, at once", async () => {
    const { connect, write, count, seen, calls } = await openView();
    const client = await connect();
    await client.query(BEGIN, []);
    await client.query(count, [1]);
    await client.query(POSTGRES_CAPABILITIES.commitWithNextStatement as string, []);
    await client.query(UNREAD + write, [2, "closing"]);
    expect(calls).toHaveLength(2);
    expect(await seen(2)).toBe(true);
    await client.query("commit", []);
    expect(calls).toHaveLength(2);
    client.release();
  });

  test("prepared statements dropped while a write is held back: the commit it went with fails, and the next transaction prepares them again", async () => {
    const { connect, write, seen, pool } = await openView();
    const raw = await pool.connect();
    await raw.query("deallocate all");
    raw.release();
    const client = await connect();
    await client.query(BEGIN, []);
    await client.query(UNREAD + write, [2, "held"]);
    await expect(client.query("commit", [])).rejects.toMatchObject({ code: "26000" });
    await client.query("rollback", []);
    expect(await seen(2)).toBe(false);
    await client.query(BEGIN, []);
    await client.query(UNREAD + write, [3, "prepared again"]);
    await client.query("commit", []);
    expect(await seen(3)).toBe(true);
    client.release();
  });

  test("outside a transaction an unread write runs as it comes", async () => {
    const { connect, write, seen, calls } = await openView();
    const client = await connect();
    await client.query(UNREAD + write, [6, "autocommit"]);
    expect(calls).toEqual([write]);
    expect(await seen(6)).toBe(true);
    client.release();
  });

  test("an unread write the connection has not prepared yet runs as it comes, inside the transaction", async () => {
    const { connect, seen, calls, table } = await openView();
    const fresh = `insert into ${table} (note, id) values ($2, $1)`;
    const client = await connect();
    await client.query(BEGIN, []);
    await client.query(UNREAD + fresh, [7, "not prepared"]);
    expect(calls).toEqual([fresh]);
    expect(await seen(7)).toBe(false);
    await client.query("commit", []);
    expect(await seen(7)).toBe(true);
    // Prepared now: the next one is held back.
    await client.query(BEGIN, []);
    await client.query(UNREAD + fresh, [8, "prepared"]);
    expect(calls).toEqual([fresh, "commit"]);
    await client.query("commit", []);
    expect(await seen(8)).toBe(true);
    client.release();
  });
});

describe("the store's units of work send their unread writes with their commit", () => {
  const lease = (key: string, holder: string) => ({ key, holder, now: Date.now(), ttlMs: 60_000 });
  const execution = (executionId: string, status: string) => ({
    tenantId: "acme",
    executionId,
    rootExecutionId: executionId,
    parentExecutionId: undefined,
    threadId: `thread-${executionId}`,
    workflowName: "refund",
    status,
    startedAt: 1_000,
    updatedAt: 2_000,
    record: { status },
  });

  /** What a start does: the thread's lease, the thread read under it, the thread and its first record. */
  const start = async (store: PostgresStore, n: number) =>
    store.atomically(async () => {
      const taken = await store.leases.acquire(lease(`acme/thread-${n}`, `h-${n}`));
      expect(taken).toBeDefined();
      await store.threads.findByTenantIdAndThreadId("acme", `thread-${n}`);
      await store.threads.save({ ...thread(`thread-${n}`), latestExecutionId: `e-${n}` });
      await store.executions.save(execution(`e-${n}`, "running"));
    });

  test("a start is three round trips: the lease, the thread read, and the commit with both writes", async () => {
    const { store, calls } = await openOnRecordedConnection(firstWord);
    await start(store, 1);
    calls.splice(0);
    await start(store, 2);
    expect(calls).toEqual(["insert", "select", "commit"]);
    expect(await store.threads.findByTenantIdAndThreadId("acme", "thread-2")).toMatchObject({
      latestExecutionId: "e-2",
    });
    expect((await store.executions.findByTenantIdAndExecutionId("acme", "e-2"))?.status).toBe("running");
    await store.close();
  });

  test("an answer's unit: its audit entry goes with the lease, and the record saved under the lease it took with the commit", async () => {
    const { store, calls } = await openOnRecordedConnection(firstWord);
    await store.executions.save(execution("root-1", "paused"));
    const answer = async (n: number) => {
      const asked = await store.pauses.findOrCreate(pause({ rootExecutionId: "root-1", askedAt: 1_000 + n }));
      await store.atomically(async () => {
        const resolved = await store.pauses.resolve(
          "acme",
          asked.pauseId,
          { approved: true } as never,
          3_000,
        );
        expect(resolved).toBeDefined();
        await store.executions.savePauseAnswer("acme", "root-1", {
          tenantId: "acme",
          rootExecutionId: "root-1",
          idempotencyKey: asked.idempotencyKey,
          askedAt: asked.askedAt,
          answer: { n },
        });
        const fence = (await store.leases.acquire(lease("acme/root-1", `answer-${n}`))) as Fence;
        expect(fence).toBeDefined();
        await store.executions.findByTenantIdAndExecutionId("acme", "root-1");
        await store.executions.save(execution("root-1", `running-${n}`), fence);
      });
      await store.leases.release((await store.leases.find("acme/root-1")) as never);
    };
    await answer(1);
    calls.splice(0);
    await answer(2);
    // The pause's change, the lease (with the audit entry in front), the record's read, and the commit
    // (with the record's save in front).
    const from = calls.indexOf("update");
    expect(calls.slice(from, calls.indexOf("commit", from) + 1)).toEqual([
      "update",
      "insert",
      "select",
      "commit",
    ]);
    expect((await store.executions.findByTenantIdAndExecutionId("acme", "root-1"))?.status).toBe("running-2");
    const trail = await store.executions.findPauseAnswersByTenantIdAndRootExecutionId("acme", "root-1");
    expect(trail.map((entry) => entry.answer)).toEqual([{ n: 1 }, { n: 2 }]);
    await store.close();
  });

  test("a record saved in a unit that did not take the lease still checks its fence: a stale holder writes nothing", async () => {
    const { store } = await openOnRecordedConnection(firstWord);
    const stale = (await store.leases.acquire(lease("acme/root-9", "old"))) as Fence;
    await store.leases.acquire({ ...lease("acme/root-9", "new"), takeOver: true });
    await expect(
      store.atomically(() => store.executions.save(execution("root-9", "running"), stale)),
    ).rejects.toMatchObject({ name: "LeaseLostError" });
    expect(await store.executions.findByTenantIdAndExecutionId("acme", "root-9")).toBeUndefined();
    await store.close();
  });

  test("an unread write refused at the commit fails the unit, and nothing of the unit is kept", async () => {
    const { store, schema, pool, calls } = await openOnRecordedConnection(firstWord);
    await start(store, 1);
    await pool.query(
      `alter table "${schema}".agboss_threads add constraint no_refused check (owner_id <> 'refused')`,
    );
    calls.splice(0);
    let saved = false;
    await expect(
      store.atomically(async () => {
        await store.leases.acquire(lease("acme/thread-3", "h-3"));
        await store.threads.save({ ...thread("thread-3"), ownerId: "refused" });
        // Held back, so told done: the server has not seen it yet.
        saved = true;
        await store.executions.save(execution("e-3", "running"));
      }),
    ).rejects.toMatchObject({ code: "23514" });
    expect(saved).toBe(true);
    // The lease, then the commit with both saves in front: the thread's refused, the commit skipped.
    expect(calls.slice(0, 2)).toEqual(["insert", "commit"]);
    expect(await store.leases.find("acme/thread-3")).toBeUndefined();
    expect(await store.executions.findByTenantIdAndExecutionId("acme", "e-3")).toBeUndefined();
    // The connection goes on: the next unit commits.
    await start(store, 4);
    expect(await store.threads.findByTenantIdAndThreadId("acme", "thread-4")).toBeDefined();
    await store.close();
  });

  test("a connection the server ended while the unit ran code of its own, its writes held for the commit: pg refuses to send the commit, and the unit runs again and commits once", async () => {
    const { store, schema } = await openOnRecordedConnection(firstWord);
    await start(store, 1);
    let attempts = 0;
    await store.atomically(async () => {
      attempts += 1;
      await store.leases.acquire(lease("acme/thread-5", "h-5"));
      await store.threads.save(thread("thread-5"));
      if (attempts > 1) return;
      // The unit's own connection (the last statement it ran names this test's schema) is cut off, and
      // pg has heard of it before the unit commits.
      await withClient((client) =>
        client.query(
          `select pg_terminate_backend(pid) from pg_stat_activity
            where state = 'idle in transaction' and query like $1 and pid <> pg_backend_pid()`,
          [`%${schema}%`],
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    expect(attempts).toBe(2);
    expect(await store.threads.findByTenantIdAndThreadId("acme", "thread-5")).toMatchObject({
      threadId: "thread-5",
    });
    // Granted once: the first attempt committed nothing.
    expect((await store.leases.find("acme/thread-5"))?.epoch).toBe(1);
    await store.close();
  });
});
