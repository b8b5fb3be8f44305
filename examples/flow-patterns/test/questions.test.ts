import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Keys, Session } from "./terminal-session.js";

let dataDir: string;
let session: Session;
let exitCode: number | null;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "agboss-questions-"));
  session = new Session("src/questions/main.ts", join(dataDir, "questions.sqlite"));
  try {
    // The pickup first, field by field: Friday afternoon is refused as a whole, then the window is asked again.
    await session.choose("2 open questions for dana", "book-pickup-tool");
    await session.choose("book-pickup-tool (orderId=ord_2231): your answer?", "Fill in the answer");
    await session.choose("day", "friday");
    await session.choose("window", "afternoon");
    await session.waitFor("instructions (for the courier) [optional, Enter to leave it out]");
    await session.press("back door", Keys.enter);
    await session.waitFor("! PickupSlotDto refused that answer:");
    await session.choose("window", "morning");
    await session.waitFor("✔ answered book-pickup-tool");

    // Then the damage, in words: the interpreter cannot read the first reply, and reads the second.
    await session.choose("1 open question for dana", "damage-refund-tool");
    await session.choose(
      "damage-refund-tool (orderId=ord_2231, paidCents=5490): your answer?",
      "Reply in words",
    );
    await session.waitFor("Your reply, in words");
    await session.press("most of it", Keys.enter);
    await session.waitFor("! not understood:");
    await session.waitFor("Your reply, in words");
    await session.press("half", Keys.enter);
    await session.waitFor("✔ replied to damage-refund-tool");
    exitCode = await session.waitForExit(8_000);
  } finally {
    session.kill();
  }
}, 40_000);

afterAll(() => {
  session?.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the questions example, driven through a terminal", () => {
  test("runs on the SQLite file it was given and exits cleanly", () => {
    expect(session.text).toContain(join(dataDir, "questions.sqlite"));
    expect(exitCode).toBe(0);
    expect(session.text).not.toMatch(/\n\s+at /);
  });

  test("one model turn asks two questions at once, each of its own role", () => {
    const text = session.text;
    expect(text).toContain(
      "• asked dana a question about book-pickup-tool (thread returns:ord_2231); it waits for the answer",
    );
    expect(text).toContain(
      "• asked dana a question about damage-refund-tool (thread returns:ord_2231); it waits for the answer",
    );
    expect(text).toContain("status    paused: 2 questions wait for dana");
    expect(text).toContain(
      "book-pickup-tool (orderId=ord_2231) · thread returns:ord_2231 · asks: The desk picks when the courier collects the return",
    );
    expect(text).toContain(
      "damage-refund-tool (orderId=ord_2231, paidCents=5490) · thread returns:ord_2231 · asks: The desk says how much of a damaged order to refund",
    );
  });

  test("a rule across fields names the field, and only that one is asked again", () => {
    const text = session.text;
    expect(text).toContain(
      "  - window: the courier does not collect on Friday afternoons; pick another window or day",
    );
    expect(text).toContain("Answer those again; the rest is kept.");
    expect(text.split("✔ day").length - 1).toBe(1);
    expect(text).toMatch(/✔ answered book-pickup-tool: execution \S+ waits for 1 more answer/);
  });

  test("a reply the interpreter cannot read shows its reason and is asked again", () => {
    const text = session.text;
    expect(text).toContain(
      '! not understood: Say "full", "half", "none" or an amount in euros such as 12.50.',
    );
    expect(text).toMatch(/✔ replied to damage-refund-tool: execution \S+ completed/);
    expect(text).toContain("No questions left for dana.");
  });

  test("each tool ran once with its answer, and the final answer reports both", () => {
    const all = session.lines();
    expect(all).toContain("tools ran book-pickup-tool, damage-refund-tool");
    expect(all).toContain(
      'output    {"text":"Pickup: courier booked for friday morning to collect ord_2231. Refund: refunded 27.45 EUR of 54.90 EUR for ord_2231, item back on the shelf."}',
    );
    expect(all.find((l) => l.startsWith("status    completed"))).toBeDefined();
  });

  test("the audit trail holds each answer", () => {
    const audit = session.lines().filter((l) => l.startsWith("pause "));
    expect(audit.sort()).toEqual([
      'pause     book-pickup-tool: question answered by dana (replied) with {"day":"friday","window":"morning","instructions":"back door"}',
      'pause     damage-refund-tool: question answered by dana (replied) with {"refundCents":2745,"restock":true}',
    ]);
  });
});

describe("stopping the questions example with Ctrl-C", () => {
  test("halfway through an answer: the questions keep waiting, with no stack trace", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agboss-questions-"));
    const stopped = new Session("src/questions/main.ts", join(dir, "questions.sqlite"));
    try {
      await stopped.choose("2 open questions for dana", "damage-refund-tool");
      await stopped.choose("your answer?", "Fill in the answer");
      await stopped.waitFor("refundCents (in cents)");
      await stopped.press("1200", Keys.enter);
      await stopped.waitFor("restock");
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
