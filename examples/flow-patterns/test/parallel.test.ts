import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Keys, Session } from "./terminal-session.js";

let dataDir: string;
let session: Session;
let exitCode: number | null;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "agboss-parallel-"));
  session = new Session("src/parallel/main.ts", join(dataDir, "parallel.sqlite"));
  try {
    // Finance's question is answered first (rejected, with a reason), then legal's (approved).
    await session.choose("2 open questions for dana", "reserve-budget-tool");
    await session.choose(
      "reserve-budget-tool (costCenter=CC-410, amountCents=4800000): your answer?",
      "Reject",
    );
    await session.waitFor("Why? (optional, Enter to skip)");
    await session.press(..."over budget this quarter", Keys.enter);
    await session.waitFor("✖ rejected reserve-budget-tool");
    await session.choose("1 open question for dana", "sign-contract-tool");
    await session.choose(
      'sign-contract-tool (supplier="Acme Corp", contractId=ctr_2291): your answer?',
      "Approve",
    );
    await session.waitFor("✔ approved sign-contract-tool");
    exitCode = await session.waitForExit(8_000);
  } finally {
    session.kill();
  }
}, 40_000);

afterAll(() => {
  session?.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the parallel approvals example, driven through a terminal", () => {
  test("runs on the SQLite file it was given and exits cleanly", () => {
    expect(session.text).toContain(join(dataDir, "parallel.sqlite"));
    expect(exitCode).toBe(0);
    expect(session.text).not.toMatch(/\n\s+at /);
  });

  test("one request fans out: ops finishes at once, legal and finance each ask dana, all in the first call", () => {
    const text = session.text;
    const firstPrompt = text.indexOf("2 open questions for dana");
    expect(text.indexOf("finished  ops-agent (it needs nobody)")).toBeGreaterThan(0);
    expect(text.indexOf("finished  ops-agent")).toBeLessThan(firstPrompt);
    expect(text).toContain(
      "• asked dana about sign-contract-tool (thread purchase:po_7731); it waits for the answer",
    );
    expect(text).toContain(
      "• asked dana about reserve-budget-tool (thread purchase:po_7731); it waits for the answer",
    );
    expect(text).toContain(
      'waiting   legal-agent: sign-contract-tool {"supplier":"Acme Corp","contractId":"ctr_2291"}',
    );
    expect(text).toContain(
      'waiting   finance-agent: reserve-budget-tool {"costCenter":"CC-410","amountCents":4800000}',
    );
    expect(text).toContain("status    paused: 2 questions wait for dana");
    // Shown while the run worked: the fan-out's branches asking, before the result's lines.
    expect(text.indexOf("▶ review-workflow\n")).toBeGreaterThanOrEqual(0);
    expect(text.indexOf("  ⏸ sign-contract-tool waits for ")).toBeLessThan(text.indexOf("status    paused"));
    expect(text).toContain("  ⏸ reserve-budget-tool waits for ");
  });

  test("the join waits for both answers: the first leaves one waiting, the second completes the execution", () => {
    const text = session.text;
    expect(text).toMatch(/✖ rejected reserve-budget-tool: execution \S+ waits for 1 more answer/);
    expect(text).toMatch(/✔ approved sign-contract-tool: execution \S+ completed/);
    expect(text).toContain("No questions left for dana.");
  });

  test("only the approved tool ran, and the summary read every branch's outcome in launch order", () => {
    const all = session.lines();
    expect(all).toContain("tools ran sign-contract-tool");
    expect(all).toContain(
      "summary   Legal: signed ctr_2291 with Acme Corp. Finance: the call was rejected by dana: over budget this quarter. Ops: delivery fits the week 32 slot.",
    );
    expect(all.find((l) => l.startsWith("status    completed"))).toBeDefined();
  });

  test("the audit trail says who answered what", () => {
    const audit = session.lines().filter((l) => l.startsWith("pause "));
    expect(audit.sort()).toEqual([
      "pause     reserve-budget-tool: rejected (over budget this quarter) by dana (replied)",
      "pause     sign-contract-tool: approved by dana (replied)",
    ]);
  });
});

describe("stopping the parallel example with Ctrl-C", () => {
  test("says the questions keep waiting, with no stack trace", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agboss-parallel-"));
    const stopped = new Session("src/parallel/main.ts", join(dir, "parallel.sqlite"));
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
