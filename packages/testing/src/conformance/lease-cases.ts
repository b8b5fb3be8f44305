import { LeaseLostError, type Store } from "@agboss/core";
import { RELEASED_LEASE_EXPIRY } from "@agboss/core/store";
import { expect } from "vitest";
import type { ConformanceContext } from "./conformance-context.js";
import { pauseRecord, uid } from "./fixtures.js";

const TTL = 30_000;

/** Leases: epochs grow with every grant; stale fences renew and release nothing. @internal */
export function leaseCases({ store, test, peerTest }: ConformanceContext): void {
  test("leases: acquire grants a free lease and find returns it", async () => {
    const key = uid("tree");
    const lease = await store().leases.acquire({ key, holder: "a", now: 1_000, ttlMs: TTL });
    expect(lease).toMatchObject({ key, holder: "a", expiresAt: 1_000 + TTL });
    expect(lease!.epoch).toBeGreaterThan(0);
    expect(await store().leases.find(key)).toEqual(lease);
    expect(await store().leases.find(uid("tree"))).toBeUndefined();
  });

  test("leases: acquire refuses a lease another holder has until it lapses", async () => {
    const key = uid("tree");
    const a = await store().leases.acquire({ key, holder: "a", now: 1_000, ttlMs: TTL });
    expect(
      await store().leases.acquire({ key, holder: "b", now: 1_000 + TTL - 1, ttlMs: TTL }),
    ).toBeUndefined();
    expect(await store().leases.find(key)).toEqual(a);
  });

  test("leases: a lapsed lease (expiresAt <= now) goes to another holder under a larger epoch", async () => {
    const key = uid("tree");
    const a = await store().leases.acquire({ key, holder: "a", now: 1_000, ttlMs: TTL });
    const b = await store().leases.acquire({ key, holder: "b", now: 1_000 + TTL, ttlMs: TTL });
    expect(b).toMatchObject({ key, holder: "b", expiresAt: 1_000 + 2 * TTL });
    expect(b!.epoch).toBeGreaterThan(a!.epoch);
  });

  test("leases: the holder acquiring again gets a new epoch", async () => {
    const key = uid("tree");
    const first = await store().leases.acquire({ key, holder: "a", now: 1_000, ttlMs: TTL });
    const second = await store().leases.acquire({ key, holder: "a", now: 2_000, ttlMs: TTL });
    expect(second!.epoch).toBeGreaterThan(first!.epoch);
    expect(second!.expiresAt).toBe(2_000 + TTL);
  });

  test("leases: renew extends a current lease and refuses a stale fence", async () => {
    const key = uid("tree");
    const a = await store().leases.acquire({ key, holder: "a", now: 1_000, ttlMs: TTL });
    expect(await store().leases.renew({ fence: a!, now: 20_000, ttlMs: TTL })).toBe(true);
    expect((await store().leases.find(key))!.expiresAt).toBe(20_000 + TTL);
    const b = await store().leases.acquire({ key, holder: "b", now: 20_000 + TTL, ttlMs: TTL });
    expect(await store().leases.renew({ fence: a!, now: 60_000, ttlMs: TTL })).toBe(false);
    expect(await store().leases.find(key)).toEqual(b);
  });

  test("leases: confirm says whether a fence holds the lease now, and writes nothing", async () => {
    const key = uid("tree");
    const a = await store().leases.acquire({ key, holder: "a", now: 1_000, ttlMs: TTL });
    expect(await store().leases.confirm(a!, 2_000)).toBe(true);
    // It extends nothing: lapsed at its expiry as before.
    expect((await store().leases.find(key))!.expiresAt).toBe(1_000 + TTL);
    expect(await store().leases.confirm(a!, 1_000 + TTL)).toBe(false);
    const b = await store().leases.acquire({ key, holder: "b", now: 1_000 + TTL, ttlMs: TTL });
    expect(await store().leases.confirm(a!, 2_000 + TTL)).toBe(false);
    expect(await store().leases.confirm(b!, 2_000 + TTL)).toBe(true);
    await store().leases.release(b!);
    expect(await store().leases.confirm(b!, 2_000 + TTL)).toBe(false);
  });

  test("leases: a released lease is not renewed (a renewal that lands after the release revives nothing)", async () => {
    const key = uid("tree");
    const a = await store().leases.acquire({ key, holder: "a", now: 1_000, ttlMs: TTL });
    await store().leases.release(a!);
    expect(await store().leases.renew({ fence: a!, now: 2_000, ttlMs: TTL })).toBe(false);
    const b = await store().leases.acquire({ key, holder: "b", now: 2_001, ttlMs: TTL });
    expect(b?.holder).toBe("b");
  });

  test("leases: takeOver takes a live lease under a new epoch, and the old holder's fence is refused", async () => {
    const key = uid("tree");
    const a = await store().leases.acquire({ key, holder: "a", now: 1_000, ttlMs: TTL });
    expect(await store().leases.acquire({ key, holder: "b", now: 2_000, ttlMs: TTL })).toBeUndefined();
    const b = await store().leases.acquire({ key, holder: "b", now: 2_000, ttlMs: TTL, takeOver: true });
    expect(b?.holder).toBe("b");
    expect(b!.epoch).toBeGreaterThan(a!.epoch);
    expect(await store().leases.renew({ fence: a!, now: 3_000, ttlMs: TTL })).toBe(false);
    await expect(store().pauses.findOrCreate(pauseRecord(), a!)).rejects.toBeInstanceOf(LeaseLostError);
    expect(await store().leases.find(key)).toEqual(b);
  });

  test("leases: release lets a current lease go and ignores a stale fence", async () => {
    const key = uid("tree");
    const a = await store().leases.acquire({ key, holder: "a", now: 1_000, ttlMs: TTL });
    await store().leases.release(a!);
    // Stored released, which tells it from a lease that lapsed.
    expect((await store().leases.find(key))?.expiresAt).toBe(RELEASED_LEASE_EXPIRY);
    const b = await store().leases.acquire({ key, holder: "b", now: 1_001, ttlMs: TTL });
    expect(b!.epoch).toBeGreaterThan(a!.epoch);
    await store().leases.release(a!);
    expect(await store().leases.find(key)).toEqual(b);
    expect(await store().leases.acquire({ key, holder: "c", now: 1_002, ttlMs: TTL })).toBeUndefined();
  });

  const race = async (one: Store, other: Store) => {
    const key = uid("tree");
    const results = await Promise.all([
      one.leases.acquire({ key, holder: "a", now: 1_000, ttlMs: TTL }),
      other.leases.acquire({ key, holder: "b", now: 1_000, ttlMs: TTL }),
    ]);
    const granted = results.filter((r) => r !== undefined);
    expect(granted).toHaveLength(1);
    expect(await one.leases.find(key)).toEqual(granted[0]);
  };

  test("leases: of two racing acquires exactly one wins", () => race(store(), store()));
  peerTest("leases: of two racing acquires on two store instances exactly one wins", (peer) =>
    race(store(), peer),
  );
}
