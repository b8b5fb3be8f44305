import {
  type App,
  ExecutionStatus,
  hours,
  milliseconds,
  PauseAnswerer,
  PauseResolution,
  PauseStatus,
  seconds,
  ToolTimeoutError,
  toMilliseconds,
} from "@agboss/core";
import { SWEEP_INTERVAL_MS } from "@agboss/core/internal";
import type { PauseRecord } from "@agboss/core/store";
import { describe, expect, test as plainTest, vi } from "vitest";
import { callTool, replyWith, TEST_CLOCK_START, TestClock, testWith } from "../src/index.js";
import {
  SlowTool,
  SlowToolProbe,
  SUPPORT_RETENTION,
  SupportAgent,
  SupportApplication,
  SupportWorkflowStart,
} from "./fixtures/support-app.js";

const test = testWith(SupportApplication);
const RETENTION_MS = toMilliseconds(SUPPORT_RETENTION);

describe("TestClock", () => {
  plainTest("starts at 2026-01-01T00:00:00.000Z, or where it is told", () => {
    expect(new Date(new TestClock().now()).toISOString()).toBe("2026-01-01T00:00:00.000Z");
    expect(new TestClock({ start: 5_000 }).now()).toBe(5_000);
  });

  plainTest(
    "advance fires due timers in due order, each at its own instant, and stops at the target",
    async () => {
      const clock = new TestClock({ start: 0 });
      const fired: string[] = [];
      clock.setTimer(300, () => fired.push(`c@${clock.now()}`));
      clock.setTimer(100, () => fired.push(`a@${clock.now()}`));
      clock.setTimer(100, () => fired.push(`b@${clock.now()}`));
      clock.setTimer(1_000, () => fired.push(`late@${clock.now()}`));
      clock.setTimer(50, () => fired.push("cancelled")).cancel();

      await clock.advance(milliseconds(500));

      expect(fired).toEqual(["a@100", "b@100", "c@300"]);
      expect(clock.now()).toBe(500);
      expect(clock.pendingTimers).toBe(1);
    },
  );

  plainTest(
    "timers set while advancing fire too when due, after the async work before them settled",
    async () => {
      const clock = new TestClock({ start: 0 });
      const fired: number[] = [];
      // Like a lease renewal: an async store call, then the next timer.
      const renew = () =>
        clock.setTimer(10_000, () => {
          void Promise.resolve()
            .then(() => Promise.resolve())
            .then(() => {
              fired.push(clock.now());
              renew();
            });
        });
      renew();

      await clock.advance(seconds(35));

      expect(fired).toEqual([10_000, 20_000, 30_000]);
      expect(clock.now()).toBe(35_000);
    },
  );

  plainTest(
    "a promise a callback returns is waited for before a later timer fires, however long it takes in real time up to callbackWaitMs",
    async () => {
      const clock = new TestClock({ start: 0 });
      const fired: string[] = [];
      // A renewal that answers after 50 real milliseconds, more than the settle turns give it.
      clock.setTimer(10_000, () =>
        new Promise((resolve) => setTimeout(resolve, 50)).then(() => fired.push("renewed")),
      );
      clock.setTimer(30_000, () => fired.push("expired"));
      await clock.advance(seconds(31));
      expect(fired).toEqual(["renewed", "expired"]);
    },
  );

  plainTest(
    "a callback's promise that does not settle within callbackWaitMs holds advance no longer",
    async () => {
      const clock = new TestClock({ start: 0, callbackWaitMs: 30 });
      const fired: number[] = [];
      clock.setTimer(10, () => new Promise(() => {}));
      clock.setTimer(20, () => fired.push(clock.now()));
      const started = performance.now();
      await clock.advance(100);
      expect(fired).toEqual([20]);
      expect(performance.now() - started).toBeGreaterThanOrEqual(25);
    },
  );

  plainTest("a callback's promise that rejects is thrown by advance once the clock arrived", async () => {
    const clock = new TestClock({ start: 0 });
    const fired: number[] = [];
    clock.setTimer(10, () => Promise.reject(new Error("renewal failed")));
    clock.setTimer(20, () => fired.push(clock.now()));
    await expect(clock.advance(100)).rejects.toThrow("renewal failed");
    expect(fired).toEqual([20]);
  });

  plainTest("set moves the clock without firing; advance(0) fires what is due", async () => {
    const clock = new TestClock({ start: 0 });
    const fired: number[] = [];
    clock.setTimer(100, () => fired.push(clock.now()));
    clock.set(1_000);
    expect(fired).toEqual([]);
    await clock.advance(0);
    expect(fired).toEqual([1_000]);
  });

  plainTest(
    "a throwing callback does not stop the others; advance throws once the clock arrived",
    async () => {
      const clock = new TestClock({ start: 0 });
      const fired: number[] = [];
      clock.setTimer(10, () => {
        throw new Error("boom");
      });
      clock.setTimer(20, () => fired.push(clock.now()));
      await expect(clock.advance(100)).rejects.toThrow("boom");
      expect(fired).toEqual([20]);
      expect(clock.now()).toBe(100);
    },
  );
});

describe("clock.advance in testWith", () => {
  const runSlowTool = (app: App) =>
    app.execute(SupportWorkflowStart, { text: "Take your time" }, { ownerId: "customer-1" });

  test("[TK-06] a tool waiting past its timeout on the app's clock is cut off: its signal aborts and the model reads a Tool error", async ({
    app,
    clock,
    mockLlm,
    mockOf,
  }) => {
    const probe = mockOf(SlowToolProbe);
    const script = mockLlm(SupportAgent).thenReturn(
      callTool(SlowTool, { label: "report" }),
      replyWith("It took too long."),
    );
    const running = runSlowTool(app);
    await vi.waitFor(() => expect(probe.started).toHaveBeenCalledTimes(1));
    const signal = probe.started.mock.calls[0]?.[0] as AbortSignal;

    await clock.advance(seconds(4));
    expect(signal.aborted).toBe(false);
    expect(script.calls).toHaveLength(1);

    await clock.advance(seconds(1)); // the 5 s timeout of SlowTool
    const result = await running;

    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(ToolTimeoutError);
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.output).toEqual({ text: "It took too long." });
    expect(script.calls[1]?.messages.at(-1)).toMatchObject({
      role: "tool",
      name: "slow-tool",
      content: expect.stringMatching(/^Tool error: .*slow-tool.*5000 ms/),
    });
  });

  test("[TK-06] the 30-second sweep runs on the test clock with cutoff now − pauseRecordRetention", async ({
    app,
    clock,
  }) => {
    const sweep = vi.spyOn(app.store.pauses, "deleteResolvedBefore");

    await clock.advance(SWEEP_INTERVAL_MS - 1);
    expect(sweep).not.toHaveBeenCalled();

    await clock.advance(1);
    expect(sweep).toHaveBeenCalledExactlyOnceWith(
      TEST_CLOCK_START + SWEEP_INTERVAL_MS - RETENTION_MS,
      10_000,
    );

    await clock.advance(seconds(30));
    expect(sweep).toHaveBeenCalledTimes(2);
    expect(sweep).toHaveBeenLastCalledWith(clock.now() - RETENTION_MS, 10_000);
  });

  test("[TK-06] retention runs on the test clock: a taken pause is removed once retention passed, a pending one stays", async ({
    app,
    clock,
    store,
  }) => {
    expect(app.store).toBe(store);
    const pause = (pauseId: string): PauseRecord => ({
      tenantId: "default",
      pauseId,
      idempotencyKey: `step-${pauseId}`,
      threadId: "thread-1",
      rootExecutionId: "exec-1",
      executionId: "exec-1",
      ownerId: "customer-1",
      status: PauseStatus.Pending,
      resolution: undefined,
      isSent: true,
      channel: "approval-channel",
      answeredBy: PauseAnswerer.ThreadOwner,
      agent: "support-agent",
      ask: {} as PauseRecord["ask"],
      step: {} as PauseRecord["step"],
      answer: undefined,
      askedAt: clock.now(),
      resolvedAt: undefined,
    });
    await store.pauses.findOrCreate(pause("taken"));
    await store.pauses.findOrCreate(pause("waiting"));
    const takenAt = clock.now();
    const taken = await store.pauses.take("default", "taken", {
      at: takenAt,
      answer: { decision: { approved: true } },
      resolution: PauseResolution.Decided,
    });
    expect(taken).toMatchObject({ status: PauseStatus.Taken, resolvedAt: takenAt });

    await clock.advance(hours(2)); // a sweep runs exactly at the retention: the record is not older yet
    expect(await store.pauses.findByTenantIdAndPauseId("default", "taken")).toBeDefined();

    await clock.advance(seconds(30)); // the next sweep
    expect(await store.pauses.findByTenantIdAndPauseId("default", "taken")).toBeUndefined();
    expect(await store.pauses.findByTenantIdAndPauseId("default", "waiting")).toMatchObject({
      status: PauseStatus.Pending,
    });
  });
});
