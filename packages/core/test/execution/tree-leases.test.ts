import { describe, expect, test } from "vitest";
import { releaseIfHeld } from "../../src/execution/tree-leases.js";
import { MemoryStore } from "../../src/store/index.js";

describe("releaseIfHeld", () => {
  test("lets go of a lease only while that very grant is on record: same holder, same epoch", async () => {
    const store = new MemoryStore();
    const key = "acme/t-1";
    const mine = await store.leases.acquire({ key, holder: "a:1", now: 0, ttlMs: 1_000 });
    if (mine === undefined) throw new Error("not granted");
    // A grant of the same key and epoch to another holder (what a rolled-back unit leaves behind: the
    // next grant gets the epoch the unit had) is not this one.
    await releaseIfHeld(store.leases, { ...mine, holder: "b:1" });
    expect((await store.leases.find(key))?.expiresAt).toBe(1_000);
    await releaseIfHeld(store.leases, mine);
    expect((await store.leases.find(key))?.expiresAt).toBe(0);
    // Taken since by someone else (a newer epoch): an older grant's release touches nothing.
    const theirs = await store.leases.acquire({ key, holder: "c:1", now: 10, ttlMs: 1_000 });
    await releaseIfHeld(store.leases, mine);
    expect(await store.leases.find(key)).toEqual(theirs);
  });
});
