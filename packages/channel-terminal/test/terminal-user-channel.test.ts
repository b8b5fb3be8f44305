import {
  type Clock,
  type ClockTimer,
  callTool,
  createApp,
  ExecutionStatus,
  hours,
  memoryStore,
  PauseAnswerer,
  replyWith,
} from "@agboss/core";
import { afterEach, expect, test, vi } from "vitest";
import { TERMINAL_USER_CHANNEL, TerminalUserChannel } from "../src/index.js";
import {
  BookExpenseTool,
  OfficeApplication,
  OfficeWorkflowStart,
  RefundCardTool,
  scriptedTurns,
} from "./fixtures/office-app.js";

afterEach(() => {
  scriptedTurns.length = 0;
});

function sink() {
  const lines: string[] = [];
  return { lines, write: (text: string) => lines.push(text) };
}

test("asks the thread's owner, notes the question without its arguments, and tells when it is taken back", async () => {
  const output = sink();
  const app = await createApp(OfficeApplication, {
    store: memoryStore(),
    providers: [TerminalUserChannel.writingTo(output)],
  });
  scriptedTurns.push(
    callTool(RefundCardTool, { orderId: "ord_9", amountCents: 900, cardNumber: "4242424242424242" }, [
      BookExpenseTool,
      { purpose: "taxi", amountCents: 2500 },
    ]),
    replyWith("done"),
  );
  const paused = await app.execute(OfficeWorkflowStart, { text: "go" }, { threadId: "t1", ownerId: "dana" });
  expect(paused.pending.map((p) => [p.channel, p.answeredBy, typeof p.pauseId])).toEqual([
    [TERMINAL_USER_CHANNEL, PauseAnswerer.ThreadOwner, "string"],
    [TERMINAL_USER_CHANNEL, PauseAnswerer.ThreadOwner, "string"],
  ]);
  // The two calls ask in parallel, so in either order.
  expect([...output.lines].sort()).toEqual([
    "• asked dana about book-expense-tool (thread t1); it waits for the answer\n",
    "• asked dana about refund-card-tool (thread t1); it waits for the answer\n",
  ]);
  const listed = await app.pauses.list({ status: "pending", role: TERMINAL_USER_CHANNEL });
  expect(listed.map((p) => p.pauseId).sort()).toEqual(paused.pending.map((p) => p.pauseId).sort());

  await app.cancel("t1");
  expect(output.lines.slice(2).sort()).toEqual([
    "• took back the question about book-expense-tool (cancelled)\n",
    "• took back the question about refund-card-tool (cancelled)\n",
  ]);
  await app.close();
});

test("writingTo(null) writes nothing", async () => {
  const app = await createApp(OfficeApplication, {
    store: memoryStore(),
    providers: [TerminalUserChannel.writingTo(null)],
  });
  scriptedTurns.push(callTool(BookExpenseTool, { purpose: "taxi", amountCents: 1 }), replyWith("done"));
  const written: unknown[] = [];
  const original = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: unknown, ...rest: never[]) => {
    written.push(chunk);
    return original(chunk as string, ...rest);
  }) as typeof process.stdout.write;
  try {
    await app.execute(OfficeWorkflowStart, { text: "go" }, { ownerId: "dana" });
  } finally {
    process.stdout.write = original;
  }
  expect(written.filter((c) => String(c).includes("it waits for the answer"))).toEqual([]);
  await app.close();
});

/** A clock that moves only when the test jumps it; the timers due by then fire, oldest first. */
class JumpClock implements Clock {
  #now = Date.UTC(2026, 0, 5, 9);
  readonly #timers = new Set<{ due: number; callback: () => void }>();
  now(): number {
    return this.#now;
  }
  setTimer(delayMs: number, callback: () => void): ClockTimer {
    const timer = { due: this.#now + Math.max(0, delayMs), callback };
    this.#timers.add(timer);
    return { cancel: () => void this.#timers.delete(timer) };
  }
  jump(ms: number): void {
    this.#now += ms;
    for (const timer of [...this.#timers].sort((a, b) => a.due - b.due)) {
      if (timer.due > this.#now) continue;
      this.#timers.delete(timer);
      timer.callback();
    }
  }
}

test("a tool's deadlines remind the owner in the terminal, then its expiry takes the question back and the call is rejected", async () => {
  const output = sink();
  const clock = new JumpClock();
  const app = await createApp(OfficeApplication, {
    store: memoryStore(),
    clock,
    providers: [TerminalUserChannel.writingTo(output)],
  });
  scriptedTurns.push(callTool(BookExpenseTool, { purpose: "taxi", amountCents: 1 }), replyWith("done"));
  const asked = new Date(clock.now()).toISOString();
  const paused = await app.execute(
    OfficeWorkflowStart,
    { text: "go" },
    { threadId: "t-late", ownerId: "dana" },
  );
  clock.jump(hours(1).milliseconds);
  await vi.waitFor(() => expect(output.lines).toHaveLength(2));
  expect(output.lines[1]).toBe(
    `• reminder 1: dana has not answered the question about book-expense-tool (thread t-late) asked ${asked}\n`,
  );
  clock.jump(hours(2).milliseconds);
  await vi.waitFor(() =>
    expect(output.lines.at(-1)).toBe(
      "• took back the question about book-expense-tool (expired: nobody answered in time)\n",
    ),
  );
  await vi.waitFor(async () =>
    expect((await app.record(paused.executionId))?.status).toBe(ExecutionStatus.Completed),
  );
  const record = await app.record(paused.executionId);
  expect(record?.steps.find((s) => s.type === "tool")).toMatchObject({
    error:
      "the call was rejected: nobody answered terminal-user-channel in time: nobody confirmed the expense in time",
  });
  await app.close();
});
