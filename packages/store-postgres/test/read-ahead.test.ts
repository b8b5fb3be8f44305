import { type Fence, KEEP_READ_CONFIG_KEY, KEPT_READ_CONFIG_KEY, readAheadOf } from "@agboss/core/store";
import pg from "pg";
import { afterAll, describe, expect, test } from "vitest";
import { PostgresStore } from "../src/index.js";
import { checkpoint, checkpointConfig, META } from "./fixtures.js";
import { dropSchema, TEST_URL, uniqueSchema } from "./postgres-server.js";

// A resume takes the tree's lease in the unit of work that records the answer; the checkpoint its pass
// reads first is read beside that unit, on another connection of the pool, and kept for the pass.

const schemas: string[] = [];
const pools: pg.Pool[] = [];
afterAll(async () => {
  for (const pool of pools.splice(0)) await pool.end();
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

/** One call a client of the pool made: which client (numbered as they connect) and the call's first word. */
interface Call {
  readonly client: number;
  readonly word: string;
}

/** A store on a pool of two connections whose clients note each call, with which client made it. */
async function openRecorded() {
  const calls: Call[] = [];
  let clients = 0;
  class RecordingClient extends pg.Client {
    readonly number = ++clients;
    // biome-ignore lint/suspicious/noExplicitAny: pg's query has many overloads; the test passes them on.
    override query(config: any, values?: any, callback?: any): any {
      const text = typeof config === "string" ? config : String(config?.text ?? "");
      calls.push({ client: this.number, word: text.trim().split(/\s+/, 1)[0]?.toLowerCase() ?? "" });
      return super.query(config, values, callback);
    }
  }
  const pool = new pg.Pool({ connectionString: TEST_URL, max: 2, Client: RecordingClient });
  pools.push(pool);
  const schema = uniqueSchema();
  schemas.push(schema);
  const store = await PostgresStore.open({ pool, schema });
  return { store, calls };
}

const LEASE = { holder: "instance-a", ttlMs: 60_000 };

describe("a checkpoint read ahead of the pass", () => {
  test("runs beside the unit of work that took the lease, on another connection, before that unit commits; the pass's first read takes it without a call and keeps it for invoke's", async () => {
    const { store, calls } = await openRecorded();
    const first = (await store.leases.acquire({ key: "t-ahead", now: Date.now(), ...LEASE })) as Fence;
    const stored = checkpoint({ step: 1 });
    await store.checkpointer.put(checkpointConfig("t-ahead", first), stored, META, { step: 1 });
    await store.leases.release(first);

    let ahead: ReturnType<typeof readAheadOf>;
    calls.splice(0);
    await store.atomically(async () => {
      const lease = await store.leases.acquire({ key: "t-ahead", now: Date.now(), ...LEASE });
      expect(lease).toBeDefined();
      ahead = readAheadOf(store.checkpointer, "t-ahead");
      expect(ahead).toBeDefined();
      // The unit's next statement: the read ahead goes on beside it.
      await store.threads.findByTenantIdAndThreadId("acme", "t-ahead");
      await ahead?.done;
    });
    const unitClient = calls[0]?.client;
    const read = calls.findIndex((call) => call.word === "with");
    const committed = calls.findIndex((call) => call.word === "commit");
    expect(read).toBeGreaterThanOrEqual(0);
    expect(calls[read]?.client).not.toBe(unitClient);
    expect(
      calls.slice(0, committed).every((call) => call.client === unitClient || call.word === "with"),
    ).toBe(true);
    expect(read).toBeLessThan(committed);

    calls.splice(0);
    const token = ahead?.token as string;
    const forInvoke = "invoke-read";
    const byPass = await store.checkpointer.getTuple({
      configurable: {
        thread_id: "t-ahead",
        [KEPT_READ_CONFIG_KEY]: token,
        [KEEP_READ_CONFIG_KEY]: forInvoke,
      },
    });
    expect(byPass?.checkpoint).toEqual(stored);
    const byInvoke = await store.checkpointer.getTuple({
      configurable: { thread_id: "t-ahead", checkpoint_ns: "", [KEPT_READ_CONFIG_KEY]: forInvoke },
    });
    expect(byInvoke).toEqual(byPass);
    expect(calls).toEqual([]);
    // Taken once: a third read reads.
    await store.checkpointer.getTuple({
      configurable: { thread_id: "t-ahead", [KEPT_READ_CONFIG_KEY]: forInvoke },
    });
    expect(calls.map((call) => call.word)).toEqual(["with"]);
    await store.close();
  });

  test("a write to the thread after the read ahead is what the pass's read sees", async () => {
    const { store } = await openRecorded();
    const lease = (await store.leases.acquire({ key: "t-written", now: Date.now(), ...LEASE })) as Fence;
    const stored = checkpoint({ step: 1 });
    const saved = await store.checkpointer.put(checkpointConfig("t-written", lease), stored, META, {
      step: 1,
    });
    const ahead = readAheadOf(store.checkpointer, "t-written");
    await ahead?.done;
    const next = checkpoint({ step: 2 });
    await store.checkpointer.put(
      checkpointConfig("t-written", lease, saved.configurable?.checkpoint_id as string),
      next,
      META,
      { step: 2 },
    );
    const read = await store.checkpointer.getTuple({
      configurable: { thread_id: "t-written", [KEPT_READ_CONFIG_KEY]: ahead?.token },
    });
    expect(read?.checkpoint).toEqual(next);
    await store.close();
  });
});

describe("a read ahead and another instance's fenced writes", () => {
  /** Two stores on one schema, each on a pool of its own: two instances of an application. */
  async function twoInstances() {
    const { store: a } = await openRecorded();
    const poolB = new pg.Pool({ connectionString: TEST_URL, max: 2 });
    pools.push(poolB);
    const b = await PostgresStore.open({ pool: poolB, schema: a.schema });
    return { a, b };
  }

  /** B's lease on `key`, granted long enough ago that it has lapsed: A may take the key over by grant. */
  async function lapsedLeaseOfB(b: PostgresStore, key: string): Promise<Fence> {
    const lapsed = await b.leases.acquire({
      key,
      holder: "instance-b",
      now: Date.now() - 120_000,
      ttlMs: 60_000,
    });
    return lapsed as Fence;
  }

  test("a write of the old holder in flight when the lease is granted: the grant waits for it, and the read ahead sees it", async () => {
    const { a, b } = await twoInstances();
    const fenceB = await lapsedLeaseOfB(b, "t-inflight");
    const first = checkpoint({ step: 1 });
    const saved = await b.checkpointer.put(checkpointConfig("t-inflight", fenceB), first, META, { step: 1 });
    const second = checkpoint({ step: 2 });
    let granted = false;
    // B writes the next checkpoint in a transaction it keeps open a while: its fence holds the lease row.
    const writing = b.atomically(async () => {
      await b.checkpointer.put(
        checkpointConfig("t-inflight", fenceB, saved.configurable?.checkpoint_id as string),
        second,
        META,
        { step: 2 },
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(granted).toBe(false);
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    let ahead: ReturnType<typeof readAheadOf>;
    await a.atomically(async () => {
      const lease = await a.leases.acquire({ key: "t-inflight", now: Date.now(), ...LEASE });
      granted = lease !== undefined;
      expect(lease?.epoch).toBe(fenceB.epoch + 1);
      ahead = readAheadOf(a.checkpointer, "t-inflight");
    });
    await writing;
    await ahead?.done;
    const read = await a.checkpointer.getTuple({
      configurable: { thread_id: "t-inflight", [KEPT_READ_CONFIG_KEY]: ahead?.token },
    });
    expect(read?.checkpoint).toEqual(second);
    await b.close();
    await a.close();
  });

  test("a write of the old holder after the grant waits for the unit, then fails: nothing of it is stored, and the read ahead is the latest checkpoint", async () => {
    const { a, b } = await twoInstances();
    const fenceB = await lapsedLeaseOfB(b, "t-after");
    const first = checkpoint({ step: 1 });
    const saved = await b.checkpointer.put(checkpointConfig("t-after", fenceB), first, META, { step: 1 });
    let ahead: ReturnType<typeof readAheadOf>;
    let late: Promise<unknown> | undefined;
    await a.atomically(async () => {
      const lease = await a.leases.acquire({ key: "t-after", now: Date.now(), ...LEASE });
      expect(lease).toBeDefined();
      ahead = readAheadOf(a.checkpointer, "t-after");
      // B, not yet told, writes under its old fence while A's unit is open.
      late = b.checkpointer
        .put(
          checkpointConfig("t-after", fenceB, saved.configurable?.checkpoint_id as string),
          checkpoint({ step: 2 }),
          META,
          { step: 2 },
        )
        .catch((error: unknown) => error);
      await new Promise((resolve) => setTimeout(resolve, 200));
    });
    await ahead?.done;
    await late;
    // Whatever B's write resolved with (a stale checkpoint write may resolve), once B's transactions have
    // ended nothing of it is stored.
    await b.close();
    const read = await a.checkpointer.getTuple({
      configurable: { thread_id: "t-after", [KEPT_READ_CONFIG_KEY]: ahead?.token },
    });
    expect(read?.checkpoint).toEqual(first);
    const latest = await a.checkpointer.getTuple({
      configurable: { thread_id: "t-after", checkpoint_ns: "" },
    });
    expect(latest?.checkpoint).toEqual(first);
    await a.close();
  });
});
