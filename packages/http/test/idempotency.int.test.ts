import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Outbox } from "./fixtures/desk.js";
import { call, type Instance, openTestStore, STORE_KINDS, startInstance, type TestStore } from "./harness.js";

const DANA = "acme:owner:dana";
const START = "/starts/desk-workflow-start";

describe.each(STORE_KINDS)("Idempotency-Key on starts, two instances on one %s store", (kind) => {
  let store: TestStore;
  let a: Instance;
  let b: Instance;
  beforeAll(async () => {
    store = await openTestStore(kind);
    a = await startInstance(store);
    b = await startInstance(store);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await store?.dispose();
  });

  const posted = () => a.app.get(Outbox).posted.length + b.app.get(Outbox).posted.length;
  const start = (instance: Instance, key: string, text: string, as = DANA) =>
    call(instance.url, START, { as, body: { input: { text } }, headers: { "idempotency-key": key } });

  test("a retry on another instance gets the first start's execution, paused then completed; nothing starts twice", async () => {
    const before = posted();
    const first = await start(a, "key-1", "refund o1 100");
    expect(first.status).toBe(202);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const retry = await start(b, "key-1", "refund o1 100");
    expect(retry.status).toBe(202);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body).toEqual(first.body);
    expect(posted()).toBe(before + 1);

    const pauseId = a.app.get(Outbox).posted.at(-1)?.pauseId ?? "";
    await call(b.url, `/pauses/${pauseId}/answer`, { as: "acme:reviewer:m", body: { reply: "approve" } });
    const late = await start(a, "key-1", "refund o1 100");
    expect(late.status).toBe(200);
    expect(late.headers.get("idempotent-replayed")).toBe("true");
    expect(late.body).toMatchObject({
      status: "completed",
      executionId: first.body.executionId,
      output: { text: expect.stringContaining("refunded 100") },
      pending: [],
    });
    expect(posted()).toBe(before + 1);
  });

  test("the same key with another input is 422; another owner's same key is their own start", async () => {
    await start(a, "key-2", "hello");
    const other = await start(b, "key-2", "goodbye");
    expect(other.status).toBe(422);
    expect(other.body.code).toBe("idempotency.key-reused");
    const eve = await start(b, "key-2", "goodbye", "acme:owner:eve");
    expect(eve.status).toBe(200);
    expect(eve.body).toMatchObject({ output: { text: "answered: goodbye" } });
  });

  test("two requests with one key at once, through both instances, start one execution", async () => {
    const before = posted();
    const [x, y] = await Promise.all([
      start(a, "key-3", "refund o3 300"),
      start(b, "key-3", "refund o3 300"),
    ]);
    const statuses = [x.status, y.status];
    for (const status of statuses) expect([202, 409]).toContain(status);
    expect(statuses).toContain(202);
    const ids = [x, y].filter((r) => r.status === 202).map((r) => r.body.executionId);
    expect(new Set(ids).size).toBe(1);
    for (const r of [x, y].filter((r) => r.status === 409)) {
      // Still running (in progress), or holding the thread before it stored anything (busy): retry.
      expect(["idempotency.in-progress", "thread.busy"]).toContain(r.body.code);
    }
    expect(posted()).toBe(before + 1);
    const replay = await start(a, "key-3", "refund o3 300");
    expect(replay.body.executionId).toBe(ids[0]);
  });

  test("a failed start's retry reports the same failure; keys are checked", async () => {
    const failed = await start(a, "key-4", "fail please");
    expect(failed.status).toBe(500);
    const retry = await start(b, "key-4", "fail please");
    expect(retry.status).toBe(500);
    expect(retry.body.code).toBe(failed.body.code);
    const long = await start(a, "k".repeat(256), "x");
    expect(long.status).toBe(400);
    expect(long.body.issues).toMatchObject([{ path: "Idempotency-Key" }]);
  });

  test("a keyed start on a thread of the domain: retries replay it, another key is a follow-up once the thread is free", async () => {
    const onOrder = (instance: Instance, key: string, text: string) =>
      call(instance.url, START, {
        as: DANA,
        body: { input: { text }, threadId: "order:k7" },
        headers: { "idempotency-key": key },
      });
    const first = await onOrder(a, "key-7", "refund o7 700");
    expect(first.status).toBe(202);
    expect(first.body.threadId).toBe("order:k7");
    const retry = await onOrder(b, "key-7", "refund o7 700");
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body.executionId).toBe(first.body.executionId);
    // Another key on the waiting thread: the thread is busy.
    const other = await onOrder(b, "key-8", "refund o7 700");
    expect(other.status).toBe(409);
    expect(other.body.code).toBe("thread.busy");

    const pauseId = a.app.get(Outbox).posted.at(-1)?.pauseId ?? "";
    await call(b.url, `/pauses/${pauseId}/answer`, { as: "acme:reviewer:m", body: { reply: "approve" } });
    const done = await onOrder(a, "key-7", "refund o7 700");
    expect(done).toMatchObject({
      status: 200,
      body: { status: "completed", executionId: first.body.executionId },
    });
    const followUp = await onOrder(b, "key-8", "thanks");
    expect(followUp.status).toBe(200);
    expect(followUp.headers.get("idempotent-replayed")).toBeNull();
    expect(followUp.body).toMatchObject({ threadId: "order:k7", status: "completed" });
    expect(followUp.body.executionId).not.toBe(first.body.executionId);
    expect((await onOrder(a, "key-8", "thanks")).body.executionId).toBe(followUp.body.executionId);
  });
});
