import { describe, expect, test } from "vitest";
import { SystemClock } from "../src/index.js";
import { FENCE_CONFIG_KEY, LeaseLostError, MemoryStore, memoryStore } from "../src/store/index.js";

const checkpoint = (id: string) => ({
  v: 4,
  id,
  ts: new Date(0).toISOString(),
  channel_values: { n: id },
  channel_versions: { n: 1 },
  versions_seen: {},
});
const meta = { source: "loop" as const, step: 0, parents: {} };

describe("the memory store", () => {
  test("memoryStore() opens a fresh store per application", async () => {
    const factory = memoryStore();
    const context = { appName: "app", clock: new SystemClock(), logger: { log() {} } };
    const [one, two] = [await factory(context), await factory(context)];
    expect(one).toBeInstanceOf(MemoryStore);
    expect(one).not.toBe(two);
    expect(one.name).toBe("memory");
  });

  test("the checkpointer refuses a stale fence before MemorySaver stores anything", async () => {
    const store = new MemoryStore();
    const a = (await store.leases.acquire({ key: "tree", holder: "a", now: 0, ttlMs: 10 }))!;
    const b = (await store.leases.acquire({ key: "tree", holder: "b", now: 10, ttlMs: 10 }))!;
    const config = (fence: object) => ({
      configurable: { thread_id: "t", checkpoint_ns: "", [FENCE_CONFIG_KEY]: fence },
    });
    await expect(store.checkpointer.put(config(a), checkpoint("1"), meta, {})).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    await expect(
      store.checkpointer.putWrites(
        { configurable: { ...config(a).configurable, checkpoint_id: "1" } },
        [["n", 1]],
        "task",
      ),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await store.checkpointer.getTuple({ configurable: { thread_id: "t" } })).toBeUndefined();
    await store.checkpointer.put(config(b), checkpoint("2"), meta, {});
    expect((await store.checkpointer.getTuple({ configurable: { thread_id: "t" } }))?.checkpoint.id).toBe(
      "2",
    );
  });
});
