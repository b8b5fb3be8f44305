import { PauseResolution, type Store } from "@agboss/core";
import { expect } from "vitest";
import type { ConformanceContext } from "./conformance-context.js";
import { pauseRecord } from "./fixtures.js";

const CANCELLED = { resolution: PauseResolution.Cancelled, at: 50 } as const;

/**
 * Withdrawals owed on cancelled pauses whose asker may still be in its channel's `send`: kept with the
 * cancel, found by due time across tenants, claimed by exactly one caller (the asker's step or a sweep),
 * and forgone by a step whose `send` failed. @internal
 */
export function withdrawalCases({ store, test, peerTest }: ConformanceContext): void {
  const pauses = () => store().pauses;
  const ids = (list: readonly { pauseId: string }[]) => list.map((p) => p.pauseId);
  /** A pending pause (with a deadline, which a cancel drops), cancelled with a withdrawal owed at `at`. */
  const owing = async (at: number, overrides: Parameters<typeof pauseRecord>[0] = {}) => {
    const pause = await pauses().findOrCreate(
      pauseRecord({ deadline: { at: 10, reminders: 1 }, ...overrides }),
    );
    const cancelled = await pauses().cancelByTenantIdAndPauseId(pause.tenantId, pause.pauseId, {
      ...CANCELLED,
      withdrawalOwedAt: at,
    });
    if (cancelled === undefined) throw new Error("the pause was not cancelled");
    return cancelled;
  };

  test("owed withdrawals: a cancel keeps one on a pause not marked sent, drops the pause's deadline, and keeps none on a sent pause or when given none", async () => {
    const owed = await owing(5_000);
    expect(owed.withdrawalOwedAt).toBe(5_000);
    expect(owed.deadline).toBeUndefined();
    const stored = await pauses().findByTenantIdAndPauseId(owed.tenantId, owed.pauseId);
    expect(stored?.withdrawalOwedAt).toBe(5_000);
    expect(stored?.deadline).toBeUndefined();
    expect(stored?.isSent).toBe(false);

    const sent = await pauses().findOrCreate(pauseRecord());
    await pauses().markSent(sent.tenantId, sent.pauseId);
    const cancelledSent = await pauses().cancelByTenantIdAndPauseId(sent.tenantId, sent.pauseId, {
      ...CANCELLED,
      withdrawalOwedAt: 5_000,
    });
    expect(cancelledSent?.withdrawalOwedAt).toBeUndefined();

    const plain = await pauses().findOrCreate(pauseRecord({ deadline: { at: 10, reminders: 0 } }));
    const cancelledPlain = await pauses().cancelByTenantIdAndPauseId(
      plain.tenantId,
      plain.pauseId,
      CANCELLED,
    );
    expect(cancelledPlain?.withdrawalOwedAt).toBeUndefined();
    expect(cancelledPlain?.deadline).toBeUndefined();

    expect(ids(await pauses().listOwedWithdrawals({ now: 10_000, limit: 10 }))).toEqual([owed.pauseId]);
    // Nor is a cancelled pause's old deadline a deadline due.
    expect(await pauses().listDueDeadlines({ now: 10_000, limit: 10 })).toEqual([]);
  });

  test("owed withdrawals: listOwedWithdrawals gives those of every tenant due by now, earliest first, page by page", async () => {
    const third = await owing(300, { tenantId: "tenant-a" });
    const first = await owing(100, { tenantId: "tenant-b" });
    const second = await owing(200, { tenantId: "tenant-c" });
    const later = await owing(500);
    // Never a pending pause with a deadline due.
    await pauses().findOrCreate(pauseRecord({ deadline: { at: 50, reminders: 0 } }));

    expect(await pauses().listOwedWithdrawals({ now: 300, limit: 10 })).toEqual([first, second, third]);
    expect(ids(await pauses().listOwedWithdrawals({ now: 299, limit: 10 }))).toEqual(ids([first, second]));
    expect(ids(await pauses().listOwedWithdrawals({ now: 1_000, limit: 2 }))).toEqual(ids([first, second]));
    const after = { owedAt: 200, tenantId: second.tenantId, pauseId: second.pauseId };
    expect(ids(await pauses().listOwedWithdrawals({ now: 1_000, limit: 10, after }))).toEqual(
      ids([third, later]),
    );
    expect(await pauses().listOwedWithdrawals({ now: 99, limit: 10 })).toEqual([]);
    expect(await pauses().listOwedWithdrawals({ now: 1_000, limit: 0 })).toEqual([]);
  });

  test("owed withdrawals: claimWithdrawal marks the cancelled pause sent with the ref and drops what it owed, once; it claims no pause marked sent or not cancelled", async () => {
    const owed = await owing(100);
    const claimed = await pauses().claimWithdrawal(owed.tenantId, owed.pauseId, { ts: "1.5" });
    expect(claimed).toMatchObject({
      pauseId: owed.pauseId,
      status: "cancelled",
      isSent: true,
      channelRef: { ts: "1.5" },
    });
    expect(claimed?.withdrawalOwedAt).toBeUndefined();
    expect(await pauses().claimWithdrawal(owed.tenantId, owed.pauseId)).toBeUndefined();
    expect(await pauses().listOwedWithdrawals({ now: 1_000, limit: 10 })).toEqual([]);
    expect(await pauses().findByTenantIdAndPauseId(owed.tenantId, owed.pauseId)).toEqual(claimed);

    // A cancelled pause that owed nothing is claimed too (its step tells), without a ref kept as none.
    const plain = await pauses().findOrCreate(pauseRecord());
    await pauses().cancelByTenantIdAndPauseId(plain.tenantId, plain.pauseId, CANCELLED);
    const plainClaim = await pauses().claimWithdrawal(plain.tenantId, plain.pauseId);
    expect(plainClaim?.isSent).toBe(true);
    expect(plainClaim?.channelRef).toBeUndefined();

    const pending = await pauses().findOrCreate(pauseRecord());
    expect(await pauses().claimWithdrawal(pending.tenantId, pending.pauseId)).toBeUndefined();
    expect((await pauses().findByTenantIdAndPauseId(pending.tenantId, pending.pauseId))?.isSent).toBe(false);
    expect(await pauses().claimWithdrawal("tenant-a", "no-such-pause")).toBeUndefined();
  });

  test("owed withdrawals: forgoWithdrawal drops what is owed and leaves the pause unsent; it forgoes nothing when nothing is owed", async () => {
    const owed = await owing(100);
    const forgone = await pauses().forgoWithdrawal(owed.tenantId, owed.pauseId);
    expect(forgone).toMatchObject({ pauseId: owed.pauseId, status: "cancelled", isSent: false });
    expect(forgone?.withdrawalOwedAt).toBeUndefined();
    expect(await pauses().listOwedWithdrawals({ now: 1_000, limit: 10 })).toEqual([]);
    expect(await pauses().forgoWithdrawal(owed.tenantId, owed.pauseId)).toBeUndefined();

    const claimed = await owing(100);
    await pauses().claimWithdrawal(claimed.tenantId, claimed.pauseId);
    expect(await pauses().forgoWithdrawal(claimed.tenantId, claimed.pauseId)).toBeUndefined();
    expect((await pauses().findByTenantIdAndPauseId(claimed.tenantId, claimed.pauseId))?.isSent).toBe(true);
  });

  const race = async (a: Store, b: Store) => {
    const owed = await a.pauses.findOrCreate(pauseRecord());
    await a.pauses.cancelByTenantIdAndPauseId(owed.tenantId, owed.pauseId, {
      ...CANCELLED,
      withdrawalOwedAt: 100,
    });
    const claims = await Promise.all(
      [a, b, a, b].map((s, n) => s.pauses.claimWithdrawal(owed.tenantId, owed.pauseId, { by: n })),
    );
    const won = claims.filter((c) => c !== undefined);
    expect(won).toHaveLength(1);
    expect((await b.pauses.findByTenantIdAndPauseId(owed.tenantId, owed.pauseId))?.channelRef).toEqual(
      won[0]?.channelRef,
    );
  };
  test("owed withdrawals: of racing claims of one withdrawal exactly one wins", () => race(store(), store()));
  peerTest(
    "owed withdrawals: of racing claims of one withdrawal on two store instances exactly one wins",
    (peer) => race(store(), peer),
  );
}
