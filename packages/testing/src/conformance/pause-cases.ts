import { PauseResolution, PauseStatus, type Store } from "@agboss/core";
import type { PauseAnswer } from "@agboss/core/store";
import { expect } from "vitest";
import type { ConformanceContext } from "./conformance-context.js";
import { json, pauseRecord, RICH_JSON, uid } from "./fixtures.js";

const ANSWER: PauseAnswer = { decision: json({ approved: true, note: "ok" }), responder: "owner-1" };
const DECIDED: PauseAnswer = { decision: { approved: false } };

/** Pause records: idempotent creation, tenant isolation, and one atomic update per status change. @internal */
export function pauseCases({ store, test, peerTest }: ConformanceContext): void {
  const pauses = () => store().pauses;

  test("pauses: findOrCreate is idempotent by (tenantId, idempotencyKey) and returns the first record", async () => {
    const first = pauseRecord();
    expect(await pauses().findOrCreate(first)).toEqual(first);
    const again = await pauses().findOrCreate({ ...first, pauseId: uid("pause"), askedAt: 9_000 });
    expect(again).toEqual(first);
    expect(await pauses().list({ tenantId: first.tenantId })).toHaveLength(1);
    const otherTenant = await pauses().findOrCreate({
      ...first,
      tenantId: "tenant-b",
      pauseId: uid("pause"),
    });
    expect(otherTenant.pauseId).not.toBe(first.pauseId);
  });

  test("pauses: find by pauseId or idempotency key never finds another tenant's pause", async () => {
    const pause = await pauses().findOrCreate(pauseRecord({ tenantId: "tenant-a" }));
    expect(await pauses().findByTenantIdAndPauseId("tenant-a", pause.pauseId)).toEqual(pause);
    expect(await pauses().findByTenantIdAndPauseId("tenant-b", pause.pauseId)).toBeUndefined();
    expect(await pauses().findByTenantIdAndIdempotencyKey("tenant-a", pause.idempotencyKey)).toEqual(pause);
    expect(await pauses().findByTenantIdAndIdempotencyKey("tenant-b", pause.idempotencyKey)).toBeUndefined();
    expect(await pauses().findByTenantIdAndPauseId("tenant-a", uid("pause"))).toBeUndefined();
  });

  test("pauses: JSON columns (ask, step, answer) round-trip unchanged", async () => {
    const pause = await pauses().findOrCreate(
      pauseRecord({ ask: json(RICH_JSON), step: json([RICH_JSON, { item: 2 }]) }),
    );
    const answer: PauseAnswer = {
      decision: json(RICH_JSON),
      responder: "owner-1",
      reply: "yes ✓",
      cost: { tokens: 12 },
    };
    await pauses().resolve(pause.tenantId, pause.pauseId, answer, 2_000);
    const found = await pauses().findByTenantIdAndPauseId(pause.tenantId, pause.pauseId);
    expect(found?.ask).toEqual(RICH_JSON);
    expect(found?.step).toEqual([RICH_JSON, { item: 2 }]);
    expect(found?.answer).toEqual(answer);
  });

  test("pauses: resolve moves Pending to Resolved, once", async () => {
    const pause = await pauses().findOrCreate(pauseRecord());
    const resolved = await pauses().resolve(pause.tenantId, pause.pauseId, ANSWER, 2_000);
    expect(resolved).toEqual({
      ...pause,
      status: PauseStatus.Resolved,
      resolution: PauseResolution.Replied,
      answer: ANSWER,
      resolvedAt: 2_000,
    });
    expect(await pauses().resolve(pause.tenantId, pause.pauseId, DECIDED, 3_000)).toBeUndefined();
    expect(await pauses().findByTenantIdAndPauseId(pause.tenantId, pause.pauseId)).toEqual(resolved);
    expect(await pauses().resolve("tenant-b", pause.pauseId, ANSWER, 2_000)).toBeUndefined();
  });

  test("pauses: take moves Resolved to Taken, keeping the answer", async () => {
    const pause = await pauses().findOrCreate(pauseRecord());
    const resolved = await pauses().resolve(pause.tenantId, pause.pauseId, ANSWER, 2_000);
    const taken = await pauses().take(pause.tenantId, pause.pauseId, { at: 3_000 });
    expect(taken).toEqual({ ...resolved, status: PauseStatus.Taken });
    expect(await pauses().take(pause.tenantId, pause.pauseId, { at: 4_000 })).toBeUndefined();
  });

  test("pauses: take with an answer and resolution moves Pending to Taken at once", async () => {
    const pause = await pauses().findOrCreate(pauseRecord());
    const taken = await pauses().take(pause.tenantId, pause.pauseId, {
      at: 2_000,
      answer: DECIDED,
      resolution: PauseResolution.Decided,
    });
    expect(taken).toEqual({
      ...pause,
      status: PauseStatus.Taken,
      resolution: PauseResolution.Decided,
      answer: DECIDED,
      resolvedAt: 2_000,
    });
  });

  test("pauses: saveToolResult keeps the first result of a Taken pause, and nothing on other statuses", async () => {
    const pause = await pauses().findOrCreate(pauseRecord());
    const first = { output: { refundId: "r-1", cents: 1_250 } };
    expect(await pauses().saveToolResult(pause.tenantId, pause.pauseId, first)).toBeUndefined();
    await pauses().resolve(pause.tenantId, pause.pauseId, ANSWER, 2_000);
    expect(await pauses().saveToolResult(pause.tenantId, pause.pauseId, first)).toBeUndefined();
    const taken = await pauses().take(pause.tenantId, pause.pauseId, { at: 3_000 });
    expect(taken?.toolResult).toBeUndefined();
    const kept = await pauses().saveToolResult(pause.tenantId, pause.pauseId, first);
    expect(kept).toEqual({ ...taken, toolResult: first });
    const second = await pauses().saveToolResult(pause.tenantId, pause.pauseId, { error: "again" });
    expect(second?.toolResult).toEqual(first);
    expect((await pauses().findByTenantIdAndPauseId(pause.tenantId, pause.pauseId))?.toolResult).toEqual(
      first,
    );
    expect(await pauses().saveToolResult("tenant-b", pause.pauseId, first)).toBeUndefined();
    const failed = await pauses().findOrCreate(pauseRecord());
    await pauses().take(failed.tenantId, failed.pauseId, { at: 2_000, answer: DECIDED });
    const error = { error: "the payment API said no" };
    expect((await pauses().saveToolResult(failed.tenantId, failed.pauseId, error))?.toolResult).toEqual(
      error,
    );
  });

  test("pauses: take refuses a Pending pause without an answer, and Taken or Cancelled pauses", async () => {
    const pending = await pauses().findOrCreate(pauseRecord());
    expect(await pauses().take(pending.tenantId, pending.pauseId, { at: 2_000 })).toBeUndefined();
    expect(await pauses().findByTenantIdAndPauseId(pending.tenantId, pending.pauseId)).toEqual(pending);
    const cancelled = await pauses().findOrCreate(pauseRecord());
    await pauses().cancelByTenantIdAndPauseId(cancelled.tenantId, cancelled.pauseId, {
      resolution: PauseResolution.Cancelled,
      at: 2_000,
    });
    const args = { at: 3_000, answer: DECIDED, resolution: PauseResolution.Decided };
    expect(await pauses().take(cancelled.tenantId, cancelled.pauseId, args)).toBeUndefined();
    expect(await pauses().take(pending.tenantId, pending.pauseId, args)).toBeDefined();
    expect(await pauses().take(pending.tenantId, pending.pauseId, args)).toBeUndefined();
  });

  test("pauses: cancel moves Pending to Cancelled only", async () => {
    const pause = await pauses().findOrCreate(pauseRecord());
    const cancelled = await pauses().cancelByTenantIdAndPauseId(pause.tenantId, pause.pauseId, {
      resolution: PauseResolution.Withdrawn,
      at: 2_000,
    });
    expect(cancelled).toEqual({
      ...pause,
      status: PauseStatus.Cancelled,
      resolution: PauseResolution.Withdrawn,
      resolvedAt: 2_000,
    });
    const resolved = await pauses().findOrCreate(pauseRecord());
    await pauses().resolve(resolved.tenantId, resolved.pauseId, ANSWER, 2_000);
    const args = { resolution: PauseResolution.Cancelled, at: 3_000 };
    expect(
      await pauses().cancelByTenantIdAndPauseId(resolved.tenantId, resolved.pauseId, args),
    ).toBeUndefined();
    expect(await pauses().cancelByTenantIdAndPauseId(pause.tenantId, pause.pauseId, args)).toBeUndefined();
    expect((await pauses().findByTenantIdAndPauseId(resolved.tenantId, resolved.pauseId))?.status).toBe(
      PauseStatus.Resolved,
    );
  });

  test("pauses: cancel keeps the answer it is given (the launch that withdrew the pause)", async () => {
    const pause = await pauses().findOrCreate(pauseRecord());
    const answer = { withdrawnBy: { executionId: "e-1/launch/2/0", launchId: "launch/1" } };
    const cancelled = await pauses().cancelByTenantIdAndPauseId(pause.tenantId, pause.pauseId, {
      resolution: PauseResolution.Withdrawn,
      at: 2_000,
      answer,
    });
    expect(cancelled?.answer).toEqual(answer);
    expect((await pauses().findByTenantIdAndPauseId(pause.tenantId, pause.pauseId))?.answer).toEqual(answer);
  });

  test("pauses: markSent keeps the channel's ref with the pause", async () => {
    const pause = await pauses().findOrCreate(pauseRecord());
    const ref = { channel: "C024BE91L", ts: "1700000000.000100", thread: ["a", 1, true, null] };
    const sent = await pauses().markSent(pause.tenantId, pause.pauseId, undefined, ref);
    expect(sent).toMatchObject({ isSent: true, channelRef: ref });
    expect((await pauses().findByTenantIdAndPauseId(pause.tenantId, pause.pauseId))?.channelRef).toEqual(ref);
    const plain = await pauses().findOrCreate(pauseRecord());
    await pauses().markSent(plain.tenantId, plain.pauseId);
    expect(
      (await pauses().findByTenantIdAndPauseId(plain.tenantId, plain.pauseId))?.channelRef,
    ).toBeUndefined();
  });

  test("pauses: markSent sets isSent on a Pending pause only", async () => {
    const pause = await pauses().findOrCreate(pauseRecord());
    expect(await pauses().markSent(pause.tenantId, pause.pauseId)).toEqual({ ...pause, isSent: true });
    expect((await pauses().findByTenantIdAndPauseId(pause.tenantId, pause.pauseId))?.isSent).toBe(true);
    const resolved = await pauses().findOrCreate(pauseRecord());
    await pauses().resolve(resolved.tenantId, resolved.pauseId, ANSWER, 2_000);
    expect(await pauses().markSent(resolved.tenantId, resolved.pauseId)).toBeUndefined();
    expect((await pauses().findByTenantIdAndPauseId(resolved.tenantId, resolved.pauseId))?.isSent).toBe(
      false,
    );
  });

  test("pauses: deleteResolvedBefore removes only Taken and Cancelled pauses resolved before the cutoff", async () => {
    const make = () => pauses().findOrCreate(pauseRecord({ askedAt: 1 }));
    const oldPending = await make();
    const oldResolved = await make();
    await pauses().resolve(oldResolved.tenantId, oldResolved.pauseId, ANSWER, 10);
    const oldTaken = await make();
    await pauses().take(oldTaken.tenantId, oldTaken.pauseId, { at: 10, answer: DECIDED });
    const oldCancelled = await make();
    const cancel = { resolution: PauseResolution.Cancelled, at: 10 };
    await pauses().cancelByTenantIdAndPauseId(oldCancelled.tenantId, oldCancelled.pauseId, cancel);
    const atCutoff = await make();
    await pauses().take(atCutoff.tenantId, atCutoff.pauseId, { at: 100, answer: DECIDED });
    const recent = await make();
    await pauses().cancelByTenantIdAndPauseId(recent.tenantId, recent.pauseId, { ...cancel, at: 500 });

    expect(await pauses().deleteResolvedBefore(100)).toBe(2);
    const left = await pauses().list({ tenantId: "tenant-a" });
    expect(left.map((p) => p.pauseId).sort()).toEqual(
      [oldPending, oldResolved, atCutoff, recent].map((p) => p.pauseId).sort(),
    );
    expect(await pauses().deleteResolvedBefore(100)).toBe(0);
    const again = await pauses().findOrCreate({ ...oldTaken, pauseId: uid("pause") });
    expect(again.status).toBe(PauseStatus.Pending);
  });

  test("pauses: deleteResolvedBefore removes a backlog longer than one batch, up to its limit, then the rest", async () => {
    const waiting = await pauses().findOrCreate(pauseRecord({ askedAt: 1 }));
    // A SQL store removes a thousand at a time, each in a transaction of its own.
    const backlog = 1_601;
    for (let from = 0; from < backlog; from += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, backlog - from) }, async () => {
          const taken = await pauses().findOrCreate(pauseRecord({ askedAt: 1 }));
          await pauses().take(taken.tenantId, taken.pauseId, { at: 10, answer: DECIDED });
        }),
      );
    }
    expect(await pauses().deleteResolvedBefore(100, 1_200)).toBe(1_200);
    expect(await pauses().deleteResolvedBefore(100)).toBe(backlog - 1_200);
    expect((await pauses().list({ tenantId: "tenant-a" })).map((p) => p.pauseId)).toEqual([waiting.pauseId]);
  });

  test("pauses: list filters by tenant, statuses, channel, thread and root, oldest asked first, up to the limit", async () => {
    const a = await pauses().findOrCreate(pauseRecord({ askedAt: 300 }));
    const b = await pauses().findOrCreate(pauseRecord({ askedAt: 100, channel: "slack" }));
    const c = await pauses().findOrCreate(
      pauseRecord({ askedAt: 200, threadId: "thread-2", rootExecutionId: "root-2" }),
    );
    const d = await pauses().findOrCreate(pauseRecord({ askedAt: 50, tenantId: "tenant-b" }));
    await pauses().resolve(a.tenantId, a.pauseId, ANSWER, 400);
    const ids = (list: { pauseId: string }[]) => list.map((p) => p.pauseId);

    expect(ids(await pauses().list({ tenantId: "tenant-a" }))).toEqual(ids([b, c, a]));
    expect(ids(await pauses().list({ tenantId: "tenant-b" }))).toEqual(ids([d]));
    expect(ids(await pauses().list({ tenantId: "tenant-a", statuses: [PauseStatus.Pending] }))).toEqual(
      ids([b, c]),
    );
    expect(
      ids(await pauses().list({ tenantId: "tenant-a", statuses: [PauseStatus.Resolved, PauseStatus.Taken] })),
    ).toEqual(ids([a]));
    // A status named twice lists each pause once.
    const twice = [PauseStatus.Pending, PauseStatus.Pending, PauseStatus.Pending];
    expect(ids(await pauses().list({ tenantId: "tenant-a", statuses: twice }))).toEqual(ids([b, c]));
    expect(ids(await pauses().list({ tenantId: "tenant-a", channel: "slack" }))).toEqual(ids([b]));
    expect(ids(await pauses().list({ tenantId: "tenant-a", threadId: "thread-2" }))).toEqual(ids([c]));
    expect(ids(await pauses().list({ tenantId: "tenant-a", rootExecutionId: "root-1" }))).toEqual(
      ids([b, a]),
    );
    expect(ids(await pauses().list({ tenantId: "tenant-a", limit: 2 }))).toEqual(ids([b, c]));
    expect(await pauses().list({ tenantId: "tenant-c" })).toEqual([]);
  });

  test("pauses: list filters by the thread's owner, across their threads", async () => {
    const mine = await pauses().findOrCreate(pauseRecord({ askedAt: 20, ownerId: "dana", threadId: "t-1" }));
    const mineToo = await pauses().findOrCreate(
      pauseRecord({ askedAt: 10, ownerId: "dana", threadId: "t-2" }),
    );
    await pauses().findOrCreate(pauseRecord({ askedAt: 5, ownerId: "eli", threadId: "t-3" }));
    await pauses().findOrCreate(pauseRecord({ askedAt: 1, ownerId: "dana", tenantId: "tenant-b" }));
    const ids = (list: { pauseId: string }[]) => list.map((p) => p.pauseId);
    expect(ids(await pauses().list({ tenantId: "tenant-a", ownerId: "dana" }))).toEqual(ids([mineToo, mine]));
    expect(
      ids(
        await pauses().list({
          tenantId: "tenant-a",
          ownerId: "dana",
          statuses: [PauseStatus.Pending],
          limit: 1,
        }),
      ),
    ).toEqual(ids([mineToo]));
    expect(await pauses().list({ tenantId: "tenant-a", ownerId: "nobody" })).toEqual([]);
  });

  test("pauses: listResolvedBefore gives Resolved pauses of every tenant resolved before the cutoff, oldest first, up to the limit", async () => {
    const resolvedAt = async (at: number, overrides: Parameters<typeof pauseRecord>[0] = {}) => {
      const pause = await pauses().findOrCreate(pauseRecord({ askedAt: 1, ...overrides }));
      return (await pauses().resolve(pause.tenantId, pause.pauseId, ANSWER, at))!;
    };
    const third = await resolvedAt(300, { tenantId: "tenant-a" });
    const first = await resolvedAt(100, { tenantId: "tenant-b", askedAt: 90 });
    const second = await resolvedAt(200, { tenantId: "tenant-c" });
    await resolvedAt(500);
    const atCutoff = await resolvedAt(400);
    // Never these: Pending, Taken (decided at once and taken after an answer) and Cancelled.
    await pauses().findOrCreate(pauseRecord());
    const decided = await pauses().findOrCreate(pauseRecord());
    await pauses().take(decided.tenantId, decided.pauseId, { at: 50, answer: DECIDED });
    const taken = await resolvedAt(60);
    await pauses().take(taken.tenantId, taken.pauseId, { at: 70 });
    const cancelled = await pauses().findOrCreate(pauseRecord());
    const cancel = { resolution: PauseResolution.Cancelled, at: 80 };
    await pauses().cancelByTenantIdAndPauseId(cancelled.tenantId, cancelled.pauseId, cancel);
    const ids = (list: { pauseId: string }[]) => list.map((p) => p.pauseId);

    const found = await pauses().listResolvedBefore({ before: 400, limit: 10 });
    expect(found).toEqual([first, second, third]);
    expect(ids(await pauses().listResolvedBefore({ before: 401, limit: 10 }))).toEqual(
      ids([first, second, third, atCutoff]),
    );
    expect(ids(await pauses().listResolvedBefore({ before: 1_000, limit: 2 }))).toEqual(ids([first, second]));
    expect(await pauses().listResolvedBefore({ before: 100, limit: 10 })).toEqual([]);
    expect(await pauses().listResolvedBefore({ before: 1_000, limit: 0 })).toEqual([]);

    await pauses().take(first.tenantId, first.pauseId, { at: 600 });
    expect(ids(await pauses().listResolvedBefore({ before: 400, limit: 10 }))).toEqual(ids([second, third]));
  });

  test("pauses: listResolvedBefore breaks ties in resolvedAt by tenantId, then pauseId", async () => {
    const make = async (tenantId: string, pauseId: string) => {
      await pauses().findOrCreate(pauseRecord({ tenantId, pauseId }));
      return (await pauses().resolve(tenantId, pauseId, ANSWER, 100))!;
    };
    const b2 = await make("tenant-b", "pause-2");
    const a2 = await make("tenant-a", "pause-2");
    const b1 = await make("tenant-b", "pause-1");
    const a1 = await make("tenant-a", "pause-1");
    const found = await pauses().listResolvedBefore({ before: 101, limit: 10 });
    expect(found.map((p) => [p.tenantId, p.pauseId])).toEqual(
      [a1, a2, b1, b2].map((p) => [p.tenantId, p.pauseId]),
    );
  });

  test("pauses: listResolvedBefore pages on from `after`, in the same order, so every resolved pause is reached", async () => {
    const make = async (tenantId: string, pauseId: string, at: number) => {
      await pauses().findOrCreate(pauseRecord({ tenantId, pauseId }));
      return (await pauses().resolve(tenantId, pauseId, ANSWER, at))!;
    };
    const all = [
      await make("tenant-b", "pause-9", 50),
      await make("tenant-a", "pause-3", 60),
      await make("tenant-b", "pause-1", 60),
      await make("tenant-a", "pause-7", 70),
      await make("tenant-a", "pause-8", 70),
    ];
    const seen: string[] = [];
    let after: { resolvedAt: number; tenantId: string; pauseId: string } | undefined;
    for (let page = 0; page < 10; page += 1) {
      const found = await pauses().listResolvedBefore({ before: 100, limit: 2, ...(after ? { after } : {}) });
      seen.push(...found.map((p) => `${p.tenantId}/${p.pauseId}`));
      const last = found.at(-1);
      if (found.length < 2 || last === undefined) break;
      after = { resolvedAt: last.resolvedAt as number, tenantId: last.tenantId, pauseId: last.pauseId };
    }
    expect(seen).toEqual(all.map((p) => `${p.tenantId}/${p.pauseId}`));
  });

  test("pauses: records are copied in and out", async () => {
    const record = pauseRecord({ ask: json({ nested: { value: 1 } }) });
    const input = structuredClone(record);
    const stored = await pauses().findOrCreate(input);
    json<{ nested: { value: number } }>(input.ask).nested.value = 2;
    json<{ nested: { value: number } }>(stored.ask).nested.value = 3;
    expect((await pauses().findByTenantIdAndPauseId(record.tenantId, record.pauseId))?.ask).toEqual({
      nested: { value: 1 },
    });
  });

  const races = (other: (peer: Store) => Store) => {
    const one = store;
    const run = async (peer: Store, change: (s: Store, pauseId: string, n: number) => Promise<unknown>) => {
      const pause = await one().pauses.findOrCreate(pauseRecord());
      const results = await Promise.all([
        change(one(), pause.pauseId, 1),
        change(other(peer), pause.pauseId, 2),
      ]);
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
      return pause;
    };
    return {
      resolve: (peer: Store) =>
        run(peer, (s, id, n) => s.pauses.resolve("tenant-a", id, { decision: json(n) }, 2_000)).then(
          async (pause) => {
            const stored = await one().pauses.findByTenantIdAndPauseId("tenant-a", pause.pauseId);
            expect(stored?.status).toBe(PauseStatus.Resolved);
          },
        ),
      take: async (peer: Store) => {
        const pause = await one().pauses.findOrCreate(pauseRecord());
        await one().pauses.resolve("tenant-a", pause.pauseId, ANSWER, 2_000);
        const results = await Promise.all([
          one().pauses.take("tenant-a", pause.pauseId, { at: 3_000 }),
          other(peer).pauses.take("tenant-a", pause.pauseId, { at: 3_000 }),
        ]);
        expect(results.filter((r) => r !== undefined)).toHaveLength(1);
      },
      resolveVersusCancel: async (peer: Store) => {
        await run(peer, (s, id, n) =>
          n === 1
            ? s.pauses.resolve("tenant-a", id, ANSWER, 2_000)
            : s.pauses.cancelByTenantIdAndPauseId("tenant-a", id, {
                resolution: PauseResolution.Cancelled,
                at: 2_000,
              }),
        );
      },
    };
  };

  const same = races(() => store());
  test("pauses: of two racing resolves exactly one wins", () => same.resolve(store()));
  test("pauses: of two racing takes exactly one wins", () => same.take(store()));
  test("pauses: of a racing resolve and cancel exactly one wins", () => same.resolveVersusCancel(store()));

  const across = races((peer) => peer);
  peerTest("pauses: of two racing resolves on two store instances exactly one wins", (peer) =>
    across.resolve(peer),
  );
  peerTest("pauses: of two racing takes on two store instances exactly one wins", (peer) =>
    across.take(peer),
  );
  peerTest("pauses: of a racing resolve and cancel on two store instances exactly one wins", (peer) =>
    across.resolveVersusCancel(peer),
  );
}
