import {
  type App,
  callTool,
  createApp,
  ExecutionStatus,
  memoryStore,
  PauseAnswerer,
  replyWith,
  type Store,
} from "@agboss/core";
import { afterEach, beforeEach, expect, test } from "vitest";
import { answerInTerminal, openQuestions, TerminalSessionEnd, TerminalUserChannel } from "../src/index.js";
import { FakeTerminal, Keys } from "./fixtures/fake-terminal.js";
import {
  BookExpenseTool,
  Ledger,
  OfficeApplication,
  OfficeWorkflowStart,
  RefundCardTool,
  scriptedTurns,
} from "./fixtures/office-app.js";

const who = { ownerId: "dana", tenantId: "acme" };
const quiet = { providers: [TerminalUserChannel.writingTo(null)] };
let store: Store;
const apps: App[] = [];

async function newApp(): Promise<App> {
  const app = await createApp(OfficeApplication, { store, ...quiet });
  apps.push(app);
  return app;
}

/**
 * Starts a conversation whose model calls both tools in one turn, so two questions wait; the model's
 * last turn is queued for when both are answered.
 */
async function askTwice(app: App, threadId = "t1", ownerId = who.ownerId) {
  scriptedTurns.length = 0;
  scriptedTurns.push(
    callTool(RefundCardTool, { orderId: "ord_9", amountCents: 900, cardNumber: "4242424242424242" }, [
      BookExpenseTool,
      { purpose: "taxi", amountCents: 2500 },
    ]),
  );
  const paused = await app.execute(
    OfficeWorkflowStart,
    { text: "refund and book" },
    { threadId, ownerId, tenant: { tenantId: "acme" } },
  );
  scriptedTurns.push(replyWith("Both handled"));
  return paused;
}

beforeEach(async () => {
  store = await memoryStore()({
    appName: "t",
    clock: { now: () => Date.now(), setTimer: () => ({ cancel() {} }) },
    logger: { log() {} },
  });
});

afterEach(async () => {
  scriptedTurns.length = 0;
  for (const app of apps.splice(0)) await app.close();
  await store.close();
});

test("two open questions are answered in any order from a fresh app, and the execution completes", async () => {
  const paused = await askTwice(await newApp());
  expect(paused.status).toBe(ExecutionStatus.Paused);
  expect(paused.pending.map((p) => p.answeredBy)).toEqual([
    PauseAnswerer.ThreadOwner,
    PauseAnswerer.ThreadOwner,
  ]);

  const app = await newApp();
  const terminal = new FakeTerminal();
  const session = answerInTerminal(app, {
    ...who,
    input: terminal.input,
    output: terminal.output,
    record: true,
  });

  await terminal.waitFor("2 open questions for dana");
  expect(terminal.text).toContain(
    "refund-card-tool (orderId=ord_9, amountCents=900, cardNumber=***) · thread t1",
  );
  expect(terminal.text).toContain("book-expense-tool (purpose=taxi, amountCents=2500) · thread t1");
  // No digit run of the card number (ids are random hex, so a short run like "4242" may appear in one).
  expect(terminal.text).not.toContain("42424242");
  // The expense first, approved.
  await terminal.choose("2 open questions for dana", "book-expense-tool");
  await terminal.choose("book-expense-tool (purpose=taxi, amountCents=2500): your answer?", "Approve");
  // What the execution does with the answer, as it does it.
  await terminal.waitFor(
    "▶ office-workflow goes on (answered by dana)\n  ✔ book-expense-tool approved\n  ⚙ book-expense-tool …\n  ✔ book-expense-tool returned\n⏸ waiting on 1 question",
  );
  await terminal.waitFor("✔ approved book-expense-tool: execution");
  await terminal.waitFor("waits for 1 more answer");

  // Then the refund, rejected with a reason.
  await terminal.choose("1 open question for dana", "refund-card-tool");
  await terminal.choose("your answer?", "Reject");
  await terminal.waitFor("Why?");
  await terminal.press("card expired", Keys.enter);
  await terminal.waitFor("✖ rejected refund-card-tool: execution");
  await terminal.waitFor('completed\n  output: {"text":"Both handled"}');
  await terminal.waitFor("No questions left for dana.");

  const { answers, end } = await session;
  expect(end).toBe(TerminalSessionEnd.NoneOpen);
  expect(answers.map((a) => [a.question.tool, a.decision])).toEqual([
    ["book-expense-tool", { approved: true }],
    ["refund-card-tool", { approved: false, reason: "card expired" }],
  ]);
  const last = answers.at(-1)?.result;
  expect(last?.status).toBe(ExecutionStatus.Completed);
  expect(last?.record?.pauses).toHaveLength(2);
  expect(last?.record?.pauses.every((p) => p.responder === "dana" && p.resolution === "replied")).toBe(true);
  expect(app.get(Ledger).expenses).toEqual([{ purpose: "taxi", amountCents: 2500 }]);
  expect(app.get(Ledger).refunds).toEqual([]);
});

test("lists only the owner's questions, across their threads", async () => {
  const app = await newApp();
  await askTwice(app, "t1");
  await askTwice(app, "t2", "erin");
  await askTwice(app, "t3");
  const open = await openQuestions(app, who);
  expect(open.map((q) => q.threadId)).toEqual(["t1", "t1", "t3", "t3"]);
  expect(open.find((q) => q.tool === "refund-card-tool")?.arguments).toEqual({
    orderId: "ord_9",
    amountCents: 900,
    cardNumber: "***",
  });
  expect(await openQuestions(app, { ownerId: "erin", tenantId: "acme" })).toHaveLength(2);
  expect(await openQuestions(app, { ownerId: "dana" })).toEqual([]);
});

test("a question answered elsewhere meanwhile is reported readably, and the list is read again", async () => {
  const app = await newApp();
  const paused = await askTwice(app);
  const terminal = new FakeTerminal();
  const session = answerInTerminal(app, { ...who, input: terminal.input, output: terminal.output });
  await terminal.choose("2 open questions", "refund-card-tool");
  await terminal.waitFor("your answer?");
  const refund = paused.pending.find((p) => p.ask.tool === "refund-card-tool");
  await app.resume({ pauseId: refund?.pauseId as string, decision: { approved: true } }, { ...who });
  await terminal.choose("your answer?", "Approve");
  await terminal.waitFor(
    "! could not answer refund-card-tool: That question is no longer open: it was already replied by dana at",
  );
  await terminal.waitFor("1 open question for dana");
  expect(terminal.text).not.toMatch(/\n\s+at /);
  terminal.input.end();
  expect((await session).end).toBe(TerminalSessionEnd.Interrupted);
  expect(app.get(Ledger).refunds).toHaveLength(1);
});

test("Ctrl-C ends the session quietly; the questions keep waiting", async () => {
  const app = await newApp();
  await askTwice(app);
  const terminal = new FakeTerminal();
  const session = answerInTerminal(app, { ...who, input: terminal.input, output: terminal.output });
  await terminal.waitFor("2 open questions");
  await terminal.press(Keys.ctrlC);
  expect(await session).toEqual({ answers: [], end: TerminalSessionEnd.Interrupted });
  expect(terminal.text).toContain("Stopped. The open questions keep waiting");
  expect(await openQuestions(app, who)).toHaveLength(2);
});

test("a closed input ends the session quietly, also before the first prompt", async () => {
  const app = await newApp();
  await askTwice(app);
  const terminal = new FakeTerminal();
  terminal.input.end();
  terminal.input.resume();
  const session = await answerInTerminal(app, { ...who, input: terminal.input, output: terminal.output });
  expect(session.end).toBe(TerminalSessionEnd.Interrupted);
  expect(await openQuestions(app, who)).toHaveLength(2);
});

test("'Answer the rest later' and 'Back to the list' leave the questions waiting", async () => {
  const app = await newApp();
  await askTwice(app);
  const terminal = new FakeTerminal();
  const session = answerInTerminal(app, { ...who, input: terminal.input, output: terminal.output });
  await terminal.choose("2 open questions", "refund-card-tool");
  await terminal.choose("your answer?", "Back to the list");
  await terminal.choose("2 open questions", "Answer the rest later");
  expect(await session).toEqual({ answers: [], end: TerminalSessionEnd.Quit });
  expect(terminal.text).toContain("2 questions left open");
  expect(await openQuestions(app, who)).toHaveLength(2);
});

test("with nothing open it says so and returns at once", async () => {
  const app = await newApp();
  const terminal = new FakeTerminal();
  const session = await answerInTerminal(app, { ...who, input: terminal.input, output: terminal.output });
  expect(session).toEqual({ answers: [], end: TerminalSessionEnd.NoneOpen });
  expect(terminal.text).toBe("No open questions for dana.\n");
});
