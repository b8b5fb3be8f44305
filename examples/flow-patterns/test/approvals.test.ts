import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Keys, Session } from "./terminal-session.js";

let dataDir: string;
let session: Session;
let exitCode: number | null;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "agboss-approvals-"));
  session = new Session("src/approvals/main.ts", join(dataDir, "approvals.sqlite"));
  try {
    // Both questions are listed at once; the expense is answered first, then the refund.
    await session.choose("2 open questions for dana", "expense-tool");
    await session.choose(
      'expense-tool (purpose="taxi to the client", amountCents=2350): your answer?',
      "Approve",
    );
    await session.waitFor("✔ approved expense-tool");
    await session.choose("1 open question for dana", "refund-tool");
    await session.choose(
      "refund-tool (orderId=ord_1042, amountCents=12990, cardNumber=***): your answer?",
      "Approve",
    );
    await session.waitFor("✔ approved refund-tool");
    exitCode = await session.waitForExit(8_000);
  } finally {
    session.kill();
  }
}, 30_000);

afterAll(() => {
  session?.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the approvals example, driven through a terminal", () => {
  test("runs on the SQLite file it was given and exits cleanly", () => {
    expect(session.text).toContain(join(dataDir, "approvals.sqlite"));
    expect(exitCode).toBe(0);
    expect(session.text).not.toMatch(/\n\s+at /);
  });

  test("one model turn asks both questions at once, arguments masked", () => {
    const text = session.text;
    expect(text).toContain("• asked dana about refund-tool (thread desk:dana); it waits for the answer");
    expect(text).toContain("• asked dana about expense-tool (thread desk:dana); it waits for the answer");
    expect(text).toContain("status    paused: 2 questions wait for dana");
    // The run's steps were shown while it worked, and so were the answered tools'.
    expect(text).toContain("▶ office-workflow\n");
    expect(text).toContain("  ⏸ refund-tool waits for ");
    expect(session.text).toContain("  ⚙ expense-tool …\n  ✔ expense-tool returned");
    expect(text).toContain(
      "refund-tool (orderId=ord_1042, amountCents=12990, cardNumber=***) · thread desk:dana",
    );
    expect(text).toContain(
      'expense-tool (purpose="taxi to the client", amountCents=2350) · thread desk:dana',
    );
    expect(text).not.toContain("4242424242424242");
  });

  test("each answer moves the execution: first one still waits, the second finishes it", () => {
    const text = session.text;
    expect(text).toMatch(/✔ approved expense-tool: execution \S+ waits for 1 more answer/);
    expect(text).toMatch(/✔ approved refund-tool: execution \S+ completed/);
    expect(text).toContain("No questions left for dana.");
  });

  test("each tool ran once, and the final answer reports both", () => {
    const all = session.lines();
    expect(all).toContain("tools ran expense-tool, refund-tool");
    expect(all).toContain(
      'output    {"text":"Refund: refunded 129.90 EUR for ord_1042. Expense: booked 23.50 EUR for taxi to the client."}',
    );
    expect(all.find((l) => l.startsWith("status    completed"))).toBeDefined();
  });

  test("the audit trail says who answered what, and when", () => {
    const audit = session.lines().filter((l) => l.startsWith("pause "));
    expect(audit).toHaveLength(2);
    // Listed in the order asked; the two calls ask in parallel, so either may come first.
    expect(audit.map((l) => l.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, "<time>")).sort()).toEqual([
      "pause     expense-tool: approved by dana (replied), asked <time>, answered <time>",
      "pause     refund-tool: approved by dana (replied), asked <time>, answered <time>",
    ]);
  });
});

describe("stopping the approvals example with Ctrl-C", () => {
  test("says the questions keep waiting, with no stack trace", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agboss-approvals-"));
    const stopped = new Session("src/approvals/main.ts", join(dir, "approvals.sqlite"));
    try {
      await stopped.waitFor("2 open questions for dana");
      await stopped.press(Keys.ctrlC);
      await stopped.waitFor("Stopped. The open questions keep waiting");
      expect(await stopped.exited).toBe(130);
      expect(stopped.text).toContain("The questions still wait in the store");
      expect(stopped.text).not.toMatch(/\n\s+at |ExitPromptError/);
    } finally {
      stopped.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 20_000);
});
