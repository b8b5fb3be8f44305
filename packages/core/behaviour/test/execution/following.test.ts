import { setTimeout as wait } from "node:timers/promises";
import {
  type App,
  type ChatRequest,
  callTool,
  ExecutionStatus,
  type ExecutionStreamEvent,
  ExecutionUnknownError,
  type FollowOptions,
  type FollowTarget,
  replyWith,
} from "@agboss/core";
import type { TestClock } from "@agboss/testing";
import { expect } from "vitest";
import { onEachBackendAndPostgres } from "../../src/backends.js";
import {
  ApprovedRefundTool,
  Desk,
  OfficeAgent,
  OfficeApplication,
  OfficeWorkflowStart,
} from "../../src/fixtures/approval-app.js";
import { acme, pauseRefund, scriptThread } from "../../src/office.js";

// app.follow: an execution another call runs, heard from this process's passes as they happen and read
// from the store for what other instances do; each event once, until the execution ends.

const POLL_MS = 1_000;
/** A poll interval the tests never reach: what such a follow hears after its first read is the bus's. */
const NEVER_MS = 3_600_000;

/** A follow read in the background into `events`; `done` settles when its loop ends (or throws). */
function followInBackground(app: App, target: FollowTarget, options: FollowOptions = {}) {
  const events: ExecutionStreamEvent[] = [];
  let ended = false;
  const done = (async () => {
    try {
      for await (const event of app.follow(target, { tenantId: acme.tenantId, ...options })) {
        events.push(event);
      }
    } finally {
      ended = true;
    }
  })();
  done.catch(() => undefined);
  return { events, done, types: () => events.map((e) => e.type), ended: () => ended };
}

/** Lets real time pass (stores answer on their own schedule), moving the Clock a poll's length when asked. */
async function until(what: () => boolean, clock?: TestClock): Promise<void> {
  for (let turn = 0; turn < 400 && !what(); turn += 1) {
    if (clock !== undefined && turn % 4 === 3) await clock.advance(POLL_MS);
    await wait(10);
  }
  expect(what()).toBe(true);
}

function count(types: readonly string[], type: string): number {
  return types.filter((t) => t === type).length;
}

onEachBackendAndPostgres(OfficeApplication, (test) => {
  test("another instance follows a thread whose pass this one runs: it reads the pause asked, its answer and the end from the store, each once", async ({
    app,
    openApp,
    mockLlm,
    clock,
  }) => {
    const { pauseId, result } = await pauseRefund(app, mockLlm, "t-follow-elsewhere");
    expect(result.status).toBe(ExecutionStatus.Paused);
    const other = await openApp();
    const follow = followInBackground(other, { threadId: "t-follow-elsewhere" }, { pollIntervalMs: POLL_MS });
    await until(() => follow.types().includes("execution.paused"), clock);

    await app.resume(
      { pauseId, decision: { approved: true } },
      { tenantId: acme.tenantId, answeredBy: "m-1" },
    );
    await until(follow.ended, clock);
    await follow.done;

    expect(follow.types()).toEqual([
      "pause.asked",
      "execution.paused",
      "pause.answered",
      "execution.finished",
    ]);
    const [asked, , answered, finished] = follow.events;
    // A channel's pause is named without its id, as the stream names it.
    expect(asked).toMatchObject({
      type: "pause.asked",
      pauseId: undefined,
      tool: "refund-card-tool",
      role: "refund-approval-channel",
    });
    expect(answered).toMatchObject({ type: "pause.answered", outcome: "approved" });
    expect(finished).toMatchObject({
      type: "execution.finished",
      executionId: result.executionId,
      threadId: "t-follow-elsewhere",
      output: { status: ExecutionStatus.Completed, output: { text: "Refund handled" } },
    });
  });

  test("a follower on the instance that answers hears its pass as it happens and the store's reads besides, each event once", async ({
    app,
    openApp,
    mockLlm,
    clock,
  }) => {
    // Two refunds one after the other: the second pause is asked by a pass of the follower's instance,
    // so the follower hears it over the bus and then reads it from the store too.
    const text = "two refunds on t-follow-here";
    scriptThread(
      mockLlm,
      text,
      callTool(ApprovedRefundTool, { orderId: "ord_1", amountCents: 1000 }),
      callTool(ApprovedRefundTool, { orderId: "ord_2", amountCents: 2000 }),
      replyWith("Both refunds handled"),
    );
    const result = await app.execute(
      OfficeWorkflowStart,
      { text },
      { threadId: "t-follow-here", ownerId: "alice", tenant: acme },
    );
    const other = await openApp();
    const follow = followInBackground(
      other,
      { executionId: result.executionId },
      { pollIntervalMs: POLL_MS },
    );
    await until(() => follow.types().includes("execution.paused"), clock);

    const lastAsked = (desk: Desk) =>
      desk.asked.filter((a) => a.channel === "refund").at(-1)?.pauseId as string;
    // The answers, and the passes that take them, run on the follower's instance; the store is read meanwhile.
    await other.resume(
      { pauseId: lastAsked(app.get(Desk)), decision: { approved: true } },
      { tenantId: acme.tenantId, answeredBy: "m-1" },
    );
    await until(() => count(follow.types(), "execution.paused") === 2, clock);
    for (let read = 0; read < 3; read += 1) {
      await clock.advance(POLL_MS);
      await wait(20);
    }
    await other.resume(
      { pauseId: lastAsked(other.get(Desk)), decision: { approved: true } },
      { tenantId: acme.tenantId, answeredBy: "m-1" },
    );
    await until(follow.ended, clock);

    const types = follow.types();
    const times = { "pause.asked": 2, "execution.paused": 2, "pause.answered": 2, "execution.finished": 1 };
    for (const [type, n] of Object.entries(times)) {
      expect(count(types, type), `${type} in ${types.join(", ")}`).toBe(n);
    }
    // Only the pass itself knows these: they came over the bus of the instance that ran it.
    expect(types).toContain("tool.started");
    expect(types).toContain("tool.returned");
    expect(types).toContain("model.turn");
    expect(types.at(-1)).toBe("execution.finished");
  });

  test("a model that streams its text streams it to a follower of the run as well", async ({
    app,
    mockLlm,
  }) => {
    const text = "refund on t-follow-text";
    const asked: boolean[] = [];
    mockLlm(OfficeAgent)
      .when((request: ChatRequest) => request.messages.find((m) => m.role === "user")?.content === text)
      .thenReturn(
        callTool(ApprovedRefundTool, { orderId: "ord_1", amountCents: 1000 }),
        (request: ChatRequest) => {
          asked.push(request.onText !== undefined);
          for (const piece of ["Refund ", "handled"]) request.onText?.(piece);
          return replyWith("Refund handled");
        },
      );
    await app.execute(
      OfficeWorkflowStart,
      { text },
      { threadId: "t-follow-text", ownerId: "alice", tenant: acme },
    );
    const pauseId = app
      .get(Desk)
      .asked.filter((a) => a.channel === "refund")
      .at(-1)?.pauseId as string;
    const follow = followInBackground(app, { threadId: "t-follow-text" }, { pollIntervalMs: NEVER_MS });
    await until(() => follow.types().includes("execution.paused"));
    await app.resume(
      { pauseId, decision: { approved: true } },
      { tenantId: acme.tenantId, answeredBy: "m-1" },
    );
    await until(follow.ended);
    expect(asked).toEqual([true]);
    expect(follow.events.flatMap((e) => (e.type === "model.text" ? [e.text] : []))).toEqual([
      "Refund ",
      "handled",
    ]);
  });

  test("a follow of an execution that has ended gives its rest alone and ends", async ({ app, mockLlm }) => {
    const { pauseId, result } = await pauseRefund(app, mockLlm, "t-follow-ended");
    await app.resume(
      { pauseId, decision: { approved: false } },
      { tenantId: acme.tenantId, answeredBy: "m-1" },
    );
    const follow = followInBackground(app, { threadId: "t-follow-ended" }, { pollIntervalMs: NEVER_MS });
    await follow.done;
    expect(follow.types()).toEqual(["execution.finished"]);
    expect(follow.events[0]).toMatchObject({ executionId: result.executionId });
  });

  test("a cancel on the follower's instance is heard at once: the pause withdrawn, then the cancelled end", async ({
    app,
    mockLlm,
  }) => {
    await pauseRefund(app, mockLlm, "t-follow-cancel");
    // The store is read once, at the start: what comes after is the bus's.
    const follow = followInBackground(app, { threadId: "t-follow-cancel" }, { pollIntervalMs: NEVER_MS });
    await until(() => follow.types().includes("execution.paused"));
    await app.cancel("t-follow-cancel", { tenantId: acme.tenantId });
    await until(follow.ended);
    expect(follow.types()).toEqual([
      "pause.asked",
      "execution.paused",
      "pause.withdrawn",
      "execution.failed",
    ]);
    expect(follow.events.at(-1)).toMatchObject({
      type: "execution.failed",
      error: { name: "ExecutionCancelledError", code: "execution.cancelled" },
    });
  });

  test("a cancel on another instance reaches the follower through the store: the pause withdrawn, then the cancelled end", async ({
    app,
    openApp,
    mockLlm,
    clock,
  }) => {
    await pauseRefund(app, mockLlm, "t-follow-cancel-elsewhere");
    const follow = followInBackground(
      app,
      { threadId: "t-follow-cancel-elsewhere" },
      { pollIntervalMs: POLL_MS },
    );
    await until(() => follow.types().includes("execution.paused"), clock);
    const other = await openApp();
    await other.cancel("t-follow-cancel-elsewhere", { tenantId: acme.tenantId });
    await until(follow.ended, clock);
    expect(follow.types()).toEqual([
      "pause.asked",
      "execution.paused",
      "pause.withdrawn",
      "execution.failed",
    ]);
    expect(follow.events.at(-1)).toMatchObject({ error: { code: "execution.cancelled" } });
  });

  test("closing the follower's app ends its follows quietly; the execution waits on", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const { result } = await pauseRefund(app, mockLlm, "t-follow-close");
    const other = await openApp();
    const follow = followInBackground(other, { threadId: "t-follow-close" }, { pollIntervalMs: NEVER_MS });
    await until(() => follow.types().includes("execution.paused"));
    await other.close();
    await follow.done;
    expect(follow.types()).toEqual(["pause.asked", "execution.paused"]);
    expect((await app.record(result.executionId, { tenantId: acme.tenantId }))?.status).toBe(
      ExecutionStatus.Paused,
    );
  });

  test("a follow of a thread the tenant does not have throws ExecutionUnknownError; its signal ends a follow quietly", async ({
    app,
    mockLlm,
  }) => {
    const unknown = followInBackground(app, { threadId: "t-nobody" });
    await expect(unknown.done).rejects.toBeInstanceOf(ExecutionUnknownError);
    await pauseRefund(app, mockLlm, "t-follow-stop");
    const otherTenant = app.follow({ threadId: "t-follow-stop" }, { tenantId: "globex" });
    await expect(otherTenant[Symbol.asyncIterator]().next()).rejects.toBeInstanceOf(ExecutionUnknownError);

    const controller = new AbortController();
    const follow = followInBackground(
      app,
      { threadId: "t-follow-stop" },
      { signal: controller.signal, pollIntervalMs: NEVER_MS },
    );
    await until(() => follow.types().includes("execution.paused"));
    controller.abort();
    await follow.done;
    expect(follow.types()).toEqual(["pause.asked", "execution.paused"]);
  });
});
