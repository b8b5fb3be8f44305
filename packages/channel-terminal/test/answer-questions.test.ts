import {
  type AnyClass,
  type App,
  callTool,
  createApp,
  ExecutionStatus,
  memoryStore,
  PauseKind,
  replyWith,
  type Store,
} from "@agboss/core";
import { afterEach, beforeEach, expect, test } from "vitest";
import { answerInTerminal, openQuestions, TerminalSessionEnd, TerminalUserChannel } from "../src/index.js";
import { FakeTerminal, Keys } from "./fixtures/fake-terminal.js";
import {
  BookPickupTool,
  channelNotes,
  DamageAssessmentChannel,
  DamageAssessmentDto,
  DamageRefundTool,
  PickupSlotChannel,
  PickupSlotDto,
  PrintLabelTool,
  ReturnsApplication,
  ReturnsLedger,
  ReturnsWorkflowStart,
  returnsTurns,
  TerminalPickupSlotChannel,
  WarehouseApprovalChannel,
} from "./fixtures/returns-app.js";

const who = { ownerId: "dana", tenantId: "acme" };
const roles = [PickupSlotChannel, DamageAssessmentChannel];
let store: Store;
const apps: App[] = [];

async function newApp(): Promise<App> {
  const app = await createApp(ReturnsApplication, {
    store,
    providers: [TerminalUserChannel.writingTo(null)],
  });
  apps.push(app);
  return app;
}

type Call = readonly [AnyClass, unknown];

/** A conversation whose model calls `calls` in one turn, then says "Done" once every one is answered. */
async function ask(app: App, calls: readonly Call[], threadId = "t1", ownerId = who.ownerId) {
  const [[tool, args], ...more] = calls as [Call, ...Call[]];
  returnsTurns.length = 0;
  returnsTurns.push(callTool(tool, args, ...more.map(([t, a]): [AnyClass, unknown] => [t, a])));
  const paused = await app.execute(
    ReturnsWorkflowStart,
    { text: "a return" },
    { threadId, ownerId, tenant: { tenantId: "acme" } },
  );
  returnsTurns.push(replyWith("Done"));
  return paused;
}

const damage: Call = [DamageRefundTool, { orderId: "ord_5", amountCents: 4000 }];
const pickup: Call = [BookPickupTool, { orderId: "ord_5" }];
const label: Call = [PrintLabelTool, { orderId: "ord_5" }];

/** The choices the select prompt asking `message` showed first. */
function choicesOf(terminal: FakeTerminal, message: string): string[] {
  const frame = terminal.text
    .slice(terminal.text.indexOf(`? ${message}`))
    .split("\n")
    .slice(1);
  const choices: string[] = [];
  for (const line of frame) {
    if (!line.startsWith("❯ ") && !line.startsWith("  ")) break;
    choices.push(line.slice(2));
  }
  return choices;
}

function session(app: App, terminal: FakeTerminal) {
  return answerInTerminal(app, {
    ...who,
    roles,
    input: terminal.input,
    output: terminal.output,
    record: true,
  });
}

beforeEach(async () => {
  channelNotes.length = 0;
  store = await memoryStore()({
    appName: "t",
    clock: { now: () => Date.now(), setTimer: () => ({ cancel() {} }) },
    logger: { log() {} },
  });
});

afterEach(async () => {
  returnsTurns.length = 0;
  for (const app of apps.splice(0)) await app.close();
  await store.close();
});

test("a question is answered field by field from a fresh app; a bad value is asked again at once", async () => {
  const paused = await ask(await newApp(), [damage]);
  expect(paused.pending.map((p) => [p.kind, p.channel])).toEqual([
    [PauseKind.Question, "damage-assessment-channel"],
  ]);
  expect(channelNotes).toEqual([
    "• asked dana a question about damage-refund-tool (thread t1); it waits for the answer\n",
  ]);

  const app = await newApp();
  const terminal = new FakeTerminal();
  const running = session(app, terminal);
  await terminal.waitFor("1 open question for dana");
  expect(terminal.text).toContain(
    "damage-refund-tool (orderId=ord_5, amountCents=4000) · thread t1 · asks: The customer says how much of a damaged order to refund",
  );
  await terminal.choose("1 open question for dana", "damage-refund-tool");
  await terminal.choose(
    "damage-refund-tool (orderId=ord_5, amountCents=4000): your answer?",
    "Fill in the answer",
  );
  await terminal.waitFor("DamageAssessmentDto for damage-refund-tool");

  // A negative amount is refused by the field's own rule, before anything is sent.
  await terminal.waitFor("refundCents (in cents)");
  await terminal.press("-5", Keys.enter);
  await terminal.waitFor("Too small");
  await terminal.press(Keys.backspace, Keys.backspace, "1800", Keys.enter);
  await terminal.waitFor("restock");
  await terminal.press("y", Keys.enter);
  await terminal.waitFor("note [optional, Enter to leave it out]");
  await terminal.press("lid chipped", Keys.enter);

  await terminal.waitFor("✔ answered damage-refund-tool: execution");
  await terminal.waitFor('completed\n  output: {"text":"Done"}');
  await terminal.waitFor("No questions left for dana.");
  const { answers, end } = await running;
  expect(end).toBe(TerminalSessionEnd.NoneOpen);
  expect(answers).toHaveLength(1);
  expect(answers[0]?.answer).toEqual({ refundCents: 1800, restock: true, note: "lid chipped" });
  expect(answers[0]?.decision).toBeUndefined();
  expect(answers[0]?.reply).toBeUndefined();
  expect(app.get(ReturnsLedger).refunds).toEqual([
    { orderId: "ord_5", assessment: { refundCents: 1800, restock: true, note: "lid chipped" } },
  ]);
  // The note is sensitive: typed without echo, and masked in the audit trail.
  expect(terminal.text).not.toContain("lid chipped");
  const [entry] = answers[0]?.result.record?.pauses ?? [];
  expect(entry?.kind).toBe(PauseKind.Question);
  expect(entry?.responder).toBe("dana");
  expect(entry?.answer).toEqual({ refundCents: 1800, restock: true, note: "***" });
});

test("an enum is picked from a list; an answer the DTO refuses names its field, which alone is asked again", async () => {
  const app = await newApp();
  await ask(app, [pickup]);
  const terminal = new FakeTerminal();
  const running = session(app, terminal);
  await terminal.choose("1 open question for dana", "book-pickup-tool");
  await terminal.choose("book-pickup-tool (orderId=ord_5): your answer?", "Fill in the answer");
  await terminal.choose("day", "friday");
  await terminal.choose("window", "afternoon");
  await terminal.waitFor("note [optional, Enter to leave it out]");
  await terminal.press(Keys.enter);

  // Friday afternoon passes each field, but not the DTO's rule across them.
  await terminal.waitFor("! PickupSlotDto refused that answer:");
  await terminal.waitFor("  - window: the courier does not come on Friday afternoons");
  await terminal.waitFor("Answer those again; the rest is kept.");
  await terminal.choose("window", "morning");
  await terminal.waitFor("✔ answered book-pickup-tool: execution");
  await terminal.waitFor("No questions left for dana.");

  const { answers } = await running;
  expect(answers.map((a) => a.answer)).toEqual([{ day: "friday", window: "morning" }]);
  expect(app.get(ReturnsLedger).pickups).toEqual([
    { orderId: "ord_5", slot: { day: "friday", window: "morning" } },
  ]);
  // The day was answered once, the window twice.
  expect(terminal.text.split("✔ day").length - 1).toBe(1);
  expect(terminal.text.split("✔ window").length - 1).toBe(2);
});

test("a reply in words is read by the role's code interpreter; one it cannot read is asked again", async () => {
  const app = await newApp();
  await ask(app, [damage]);
  const terminal = new FakeTerminal();
  const running = session(app, terminal);
  await terminal.choose("1 open question for dana", "damage-refund-tool");
  await terminal.choose("your answer?", "Reply in words");
  await terminal.waitFor("Your reply, in words");
  await terminal.press("whatever you think", Keys.enter);
  await terminal.waitFor('! not understood: Answer "full", "half", "none" or an amount such as 12.50.');
  await terminal.waitFor("Your reply, in words");
  await terminal.press("half", Keys.enter);
  await terminal.waitFor("✔ replied to damage-refund-tool: execution");
  await terminal.waitFor("No questions left for dana.");

  const { answers } = await running;
  expect(answers.map((a) => [a.reply, a.answer, a.decision])).toEqual([["half", undefined, undefined]]);
  expect(app.get(ReturnsLedger).refunds).toEqual([
    { orderId: "ord_5", assessment: { refundCents: 2000, restock: true } },
  ]);
  expect(answers[0]?.result.record?.pauses[0]?.answer).toEqual({ refundCents: 2000, restock: true });
});

test("an empty reply goes back, and a role without an interpreter offers no reply", async () => {
  const app = await newApp();
  await ask(app, [pickup], "t1");
  await ask(app, [damage], "t2");
  const terminal = new FakeTerminal();
  const running = session(app, terminal);
  await terminal.choose("2 open questions for dana", "damage-refund-tool");
  await terminal.choose(
    "damage-refund-tool (orderId=ord_5, amountCents=4000): your answer?",
    "Reply in words",
  );
  await terminal.waitFor("Your reply, in words");
  await terminal.press(Keys.enter);
  await terminal.choose(
    "damage-refund-tool (orderId=ord_5, amountCents=4000): your answer?",
    "Back to the list",
  );
  await terminal.choose("2 open questions for dana", "book-pickup-tool");
  await terminal.choose("book-pickup-tool (orderId=ord_5): your answer?", "Back to the list");
  expect(choicesOf(terminal, "book-pickup-tool (orderId=ord_5): your answer?")).toEqual([
    "Fill in the answer",
    "Back to the list",
  ]);
  await terminal.choose("2 open questions for dana", "Answer the rest later");
  expect(await running).toEqual({ answers: [], end: TerminalSessionEnd.Quit });
  expect(await openQuestions(app, { ...who, roles })).toHaveLength(2);
});

test("approvals are answered as before, in the same list as questions", async () => {
  const app = await newApp();
  const paused = await ask(app, [label, pickup]);
  expect(paused.pending.map((p) => p.kind).sort()).toEqual([PauseKind.Approval, PauseKind.Question]);
  const terminal = new FakeTerminal();
  const running = session(app, terminal);
  await terminal.waitFor("2 open questions for dana");
  expect(terminal.text).toContain("print-label-tool (orderId=ord_5) · thread t1\n");
  expect(terminal.text).toContain(
    "book-pickup-tool (orderId=ord_5) · thread t1 · asks: The customer picks when the courier comes",
  );
  await terminal.choose("2 open questions for dana", "print-label-tool");
  await terminal.choose("print-label-tool (orderId=ord_5): your answer?", "Reject");
  expect(choicesOf(terminal, "print-label-tool (orderId=ord_5): your answer?")).toEqual([
    "Approve",
    "Reject",
    "Back to the list",
  ]);
  await terminal.waitFor("Why?");
  await terminal.press("no printer", Keys.enter);
  await terminal.waitFor("✖ rejected print-label-tool: execution");
  await terminal.waitFor("waits for 1 more answer");

  await terminal.choose("1 open question for dana", "book-pickup-tool");
  await terminal.choose("your answer?", "Fill in the answer");
  await terminal.choose("day", "tuesday");
  await terminal.choose("window", "morning");
  await terminal.waitFor("note [optional, Enter to leave it out]");
  await terminal.press("ring twice", Keys.enter);
  await terminal.waitFor("✔ answered book-pickup-tool: execution");
  await terminal.waitFor("No questions left for dana.");

  const { answers, end } = await running;
  expect(end).toBe(TerminalSessionEnd.NoneOpen);
  expect(answers.map((a) => [a.question.kind, a.question.tool, a.decision, a.answer])).toEqual([
    [PauseKind.Approval, "print-label-tool", { approved: false, reason: "no printer" }, undefined],
    [
      PauseKind.Question,
      "book-pickup-tool",
      undefined,
      { day: "tuesday", window: "morning", note: "ring twice" },
    ],
  ]);
  const last = answers.at(-1)?.result;
  expect(last?.status).toBe(ExecutionStatus.Completed);
  expect(last?.record?.pauses.map((p) => [p.kind, p.decision, p.answer])).toEqual([
    [PauseKind.Approval, { approved: false, reason: "no printer" }, undefined],
    [PauseKind.Question, undefined, { day: "tuesday", window: "morning", note: "ring twice" }],
  ]);
  expect(app.get(ReturnsLedger).labels).toEqual([]);
});

test("without roles only terminal-user-channel's approvals are listed; a role's implementation stands for it", async () => {
  const app = await newApp();
  await ask(app, [label, pickup, damage]);
  expect((await openQuestions(app, who)).map((q) => q.tool)).toEqual(["print-label-tool"]);
  const open = await openQuestions(app, {
    ...who,
    roles: [TerminalPickupSlotChannel, DamageAssessmentChannel],
  });
  const byTool = Object.fromEntries(open.map((q) => [q.tool, q]));
  expect(Object.keys(byTool).sort()).toEqual(["book-pickup-tool", "damage-refund-tool", "print-label-tool"]);
  expect(byTool["book-pickup-tool"]).toMatchObject({
    kind: PauseKind.Question,
    channel: "pickup-slot-channel",
    answer: PickupSlotDto,
    readsReplies: false,
  });
  expect(byTool["damage-refund-tool"]).toMatchObject({ answer: DamageAssessmentDto, readsReplies: true });
  expect(byTool["print-label-tool"]).toMatchObject({
    kind: PauseKind.Approval,
    channel: "terminal-user-channel",
    answer: undefined,
  });
});

test("a role its thread's owner cannot answer is refused before anything is shown", async () => {
  const app = await newApp();
  const terminal = new FakeTerminal();
  await expect(
    answerInTerminal(app, {
      ...who,
      roles: [WarehouseApprovalChannel],
      input: terminal.input,
      output: terminal.output,
    }),
  ).rejects.toThrow(/warehouse-approval-channel is answered by channel, not by the thread's owner/);
  await expect(openQuestions(app, { ...who, roles: [ReturnsLedger] })).rejects.toThrow(
    "ReturnsLedger is neither a @ChannelRole nor a @Channel.",
  );
  expect(terminal.text).toBe("");
});

test("Ctrl-C halfway through an answer ends the session; the question keeps waiting, nothing half-given", async () => {
  const app = await newApp();
  await ask(app, [damage]);
  const terminal = new FakeTerminal();
  const running = session(app, terminal);
  await terminal.choose("1 open question for dana", "damage-refund-tool");
  await terminal.choose("your answer?", "Fill in the answer");
  await terminal.waitFor("refundCents");
  await terminal.press("900", Keys.enter);
  await terminal.waitFor("restock");
  await terminal.press(Keys.ctrlC);
  expect(await running).toEqual({ answers: [], end: TerminalSessionEnd.Interrupted });
  expect(terminal.text).toContain("Stopped. The open questions keep waiting");
  expect((await openQuestions(app, { ...who, roles })).map((q) => q.tool)).toEqual(["damage-refund-tool"]);
  expect(app.get(ReturnsLedger).refunds).toEqual([]);
});
