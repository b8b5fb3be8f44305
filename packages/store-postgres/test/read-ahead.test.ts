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
