import { PauseResolution, PauseStatus, type Store } from "@agboss/core";
import type { PauseAnswer, PauseDeadline } from "@agboss/core/store";
import { expect } from "vitest";
import type { ConformanceContext } from "./conformance-context.js";
import { pauseRecord } from "./fixtures.js";

const EXPIRED: PauseAnswer = { decision: { approved: false, reason: "no answer in time" } };

/**
 * Deadlines of pending pauses: found by due time across tenants, page by page, and each claimed by
 * exactly one sweep, also across two store instances. @internal
 */
export function deadlineCases({ store, test, peerTest }: ConformanceContext): void {
  const pauses = () => store().pauses;
  const ids = (list: readonly { pauseId: string }[]) => list.map((p) => p.pauseId);
  const withDeadline = (at: number, overrides: Parameters<typeof pauseRecord>[0] = {}) =>
    pauses().findOrCreate(pauseRecord({ deadline: { at, reminders: 0 }, ...overrides }));

  test("deadlines: a pause keeps its deadline (when and how many reminders) and its expiry as created", async () => {
    const pause = await withDeadline(5_000, { expiresAt: 9_000 });
    expect(pause.deadline).toEqual({ at: 5_000, reminders: 0 });
    expect(pause.expiresAt).toBe(9_000);
    expect((await pauses().findByTenantIdAndPauseId(pause.tenantId, pause.pauseId))?.deadline).toEqual({
      at: 5_000,
      reminders: 0,
    });
    const claimed = await pauses().claimDeadline(pause.tenantId, pause.pauseId, {
      from: { at: 5_000, reminders: 0 },
      to: { at: 6_000, reminders: 1 },
    });
    expect(claimed?.expiresAt).toBe(9_000);
    const none = await pauses().findOrCreate(pauseRecord());
    expect(none.deadline).toBeUndefined();
    expect(none.expiresAt).toBeUndefined();
  });

  test("deadlines: listDueDeadlines gives Pending pauses of every tenant due by now, earliest first, up to the limit", async () => {
    const third = await withDeadline(300, { tenantId: "tenant-a" });
    const first = await withDeadline(100, { tenantId: "tenant-b" });
    const second = await withDeadline(200, { tenantId: "tenant-c" });
    const later = await withDeadline(500);
    // Never these: no deadline, or not Pending any more.
    await pauses().findOrCreate(pauseRecord());
    const answered = await withDeadline(50);
    await pauses().resolve(answered.tenantId, answered.pauseId, EXPIRED, 60);
    const cancelled = await withDeadline(50);
    await pauses().cancelByTenantIdAndPauseId(cancelled.tenantId, cancelled.pauseId, {
      resolution: PauseResolution.Cancelled,
      at: 60,
    });

    expect(await pauses().listDueDeadlines({ now: 300, limit: 10 })).toEqual([first, second, third]);
    expect(ids(await pauses().listDueDeadlines({ now: 299, limit: 10 }))).toEqual(ids([first, second]));
    expect(ids(await pauses().listDueDeadlines({ now: 1_000, limit: 2 }))).toEqual(ids([first, second]));
    expect(ids(await pauses().listDueDeadlines({ now: 1_000, limit: 10 }))).toEqual(
      ids([first, second, third, later]),
    );
    expect(await pauses().listDueDeadlines({ now: 99, limit: 10 })).toEqual([]);
    expect(await pauses().listDueDeadlines({ now: 1_000, limit: 0 })).toEqual([]);
  });

  test("deadlines: listDueDeadlines pages on from `after` (ties by tenantId, then pauseId), so every due pause is reached", async () => {
    const all = [
      await withDeadline(50, { tenantId: "tenant-b", pauseId: "pause-9" }),
      await withDeadline(60, { tenantId: "tenant-a", pauseId: "pause-3" }),
      await withDeadline(60, { tenantId: "tenant-b", pauseId: "pause-1" }),
      await withDeadline(70, { tenantId: "tenant-a", pauseId: "pause-7" }),
      await withDeadline(70, { tenantId: "tenant-a", pauseId: "pause-8" }),
    ];
    const seen: string[] = [];
    let after: { deadlineAt: number; tenantId: string; pauseId: string } | undefined;
    for (let page = 0; page < 10; page += 1) {
      const found = await pauses().listDueDeadlines({
        now: 1_000,
        limit: 2,
        ...(after === undefined ? {} : { after }),
      });
      seen.push(...found.map((p) => `${p.tenantId}/${p.pauseId}`));
      const last = found.at(-1);
      if (found.length < 2 || last === undefined) break;
      after = {
        deadlineAt: (last.deadline as PauseDeadline).at,
        tenantId: last.tenantId,
        pauseId: last.pauseId,
      };
    }
    expect(seen).toEqual(all.map((p) => `${p.tenantId}/${p.pauseId}`));
  });

  test("deadlines: claimDeadline moves the deadline only from the one it was read with, and only while Pending", async () => {
    const pause = await withDeadline(100);
    const from = { at: 100, reminders: 0 };
    const claimed = await pauses().claimDeadline(pause.tenantId, pause.pauseId, {
      from,
      to: { at: 200, reminders: 1 },
    });
    expect(claimed).toEqual({ ...pause, deadline: { at: 200, reminders: 1 } });
    // The same claim again (another sweep that read the old deadline): nothing.
    expect(
      await pauses().claimDeadline(pause.tenantId, pause.pauseId, { from, to: { at: 200, reminders: 1 } }),
    ).toBeUndefined();
    // A deadline with the right time but another count is another deadline.
    expect(
      await pauses().claimDeadline(pause.tenantId, pause.pauseId, {
        from: { at: 200, reminders: 0 },
        to: undefined,
      }),
    ).toBeUndefined();
    expect(await pauses().listDueDeadlines({ now: 150, limit: 10 })).toEqual([]);
    expect(ids(await pauses().listDueDeadlines({ now: 200, limit: 10 }))).toEqual([pause.pauseId]);
    // The last deadline claimed: none left, never listed again.
    const last = await pauses().claimDeadline(pause.tenantId, pause.pauseId, {
      from: { at: 200, reminders: 1 },
      to: undefined,
    });
    expect(last?.deadline).toBeUndefined();
    expect(last?.status).toBe(PauseStatus.Pending);
    expect(await pauses().listDueDeadlines({ now: 10_000, limit: 10 })).toEqual([]);
    // Another tenant's pause of the same id is not claimed.
    const other = await withDeadline(100, { tenantId: "tenant-b" });
    expect(await pauses().claimDeadline("tenant-a", other.pauseId, { from, to: undefined })).toBeUndefined();
    // Not Pending: nothing to claim.
    await pauses().resolve(other.tenantId, other.pauseId, EXPIRED, 150);
    expect(
      await pauses().claimDeadline(other.tenantId, other.pauseId, { from, to: undefined }),
    ).toBeUndefined();
  });

  test("deadlines: resolve keeps the resolution it is given (expired, escalated) and the answer", async () => {
    const pause = await withDeadline(100);
    const expired = await pauses().resolve(pause.tenantId, pause.pauseId, EXPIRED, 120, {
      resolution: PauseResolution.Expired,
    });
    expect(expired?.status).toBe(PauseStatus.Resolved);
    expect(expired?.resolution).toBe(PauseResolution.Expired);
    expect(expired?.answer).toEqual(EXPIRED);
    expect(expired?.resolvedAt).toBe(120);
    const taken = await pauses().take(pause.tenantId, pause.pauseId, { at: 130 });
    expect(taken?.resolution).toBe(PauseResolution.Expired);
    const other = await withDeadline(100);
    const escalated = await pauses().resolve(
      other.tenantId,
      other.pauseId,
      { escalatedTo: "manager-approval-channel" },
      120,
      { resolution: PauseResolution.Escalated },
    );
    expect(escalated?.resolution).toBe(PauseResolution.Escalated);
    expect(escalated?.answer).toEqual({ escalatedTo: "manager-approval-channel" });
    expect(await pauses().listDueDeadlines({ now: 10_000, limit: 10 })).toEqual([]);
  });

  const race = async (a: Store, b: Store) => {
    const pause = await a.pauses.findOrCreate(pauseRecord({ deadline: { at: 100, reminders: 2 } }));
    const from = { at: 100, reminders: 2 };
    const claims = await Promise.all(
      [a, b, a, b].map((s, n) =>
        s.pauses.claimDeadline(pause.tenantId, pause.pauseId, { from, to: { at: 200 + n, reminders: 3 } }),
      ),
    );
    const won = claims.filter((c) => c !== undefined);
    expect(won).toHaveLength(1);
    expect((await b.pauses.findByTenantIdAndPauseId(pause.tenantId, pause.pauseId))?.deadline).toEqual(
      won[0]?.deadline,
    );
  };
  test("deadlines: of racing claims of one deadline exactly one wins", () => race(store(), store()));
  peerTest("deadlines: of racing claims of one deadline on two store instances exactly one wins", (peer) =>
    race(store(), peer),
  );
}
