import { callTool, createApp, memoryStore, PauseAnswerer, replyWith } from "@agboss/core";
import { afterEach, expect, test } from "vitest";
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
