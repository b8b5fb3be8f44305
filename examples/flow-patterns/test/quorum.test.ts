import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Session } from "./terminal-session.js";

let dataDir: string;
let session: Session;
let exitCode: number | null;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "agboss-quorum-"));
  session = new Session("src/quorum/main.ts", join(dataDir, "quorum.sqlite"));
  try {
    // Three sign-offs wait; dana approves legal and security, and the quorum is met.
    await session.choose("3 open questions for dana", "reviewer=legal");
    await session.choose('sign-off-tool (reviewer=legal, release="release 2.4.0"): your answer?', "Approve");
    await session.waitFor("✔ approved sign-off-tool");
    await session.choose("2 open questions for dana", "reviewer=security");
    await session.choose(
      'sign-off-tool (reviewer=security, release="release 2.4.0"): your answer?',
      "Approve",
    );
    await session.waitFor("✔ approved sign-off-tool");
    exitCode = await session.waitForExit(8_000);
  } finally {
    session.kill();
  }
}, 30_000);

afterAll(() => {
  session?.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the quorum example, driven through a terminal", () => {
  test("runs on the SQLite file it was given and exits cleanly", () => {
    expect(session.text).toContain(join(dataDir, "quorum.sqlite"));
    expect(exitCode).toBe(0);
    expect(session.text).not.toMatch(/\n\s+at /);
  });

  test("three reviewers ask at once", () => {
    const text = session.text;
    expect(text).toContain("status    paused: 3 sign-offs wait for dana; two of them decide");
    // Shown while the run worked: three asks, one per reviewer.
    expect(text).toContain("▶ release-workflow\n");
    expect(text.split("  ⏸ sign-off-tool waits for ").length - 1).toBeGreaterThanOrEqual(3);
    for (const reviewer of ["legal", "security", "finance"])
      expect(text).toContain(
        `sign-off-tool (reviewer=${reviewer}, release="release 2.4.0") · thread release:2.4.0`,
      );
  });

  test("the first approval leaves two waiting; the second decides the quorum and takes the third question back", () => {
    const text = session.text;
    expect(text).toMatch(/✔ approved sign-off-tool: execution \S+ waits for 2 more answers/);
    expect(text).toContain("• took back the question about sign-off-tool (no longer needed)");
    expect(text).toMatch(/✔ approved sign-off-tool: execution \S+ completed/);
    expect(text).toContain("No questions left for dana.");
    expect(text.match(/took back the question/g)).toHaveLength(1);
  });

  test("the release goes out with two sign-offs; finance was not needed", () => {
    const all = session.lines();
    expect(all).toContain(
      'output    {"text":"Release approved: legal and security signed off; finance no longer needed."}',
    );
    expect(all.find((l) => l.startsWith("status    completed"))).toBeDefined();
  });

  test("the audit trail shows two answers and one withdrawal", () => {
    const audit = session.lines().filter((l) => l.startsWith("pause "));
    expect(audit.sort()).toEqual([
      "pause     finance: withdrawn before anyone answered (withdrawn)",
      "pause     legal: approved by dana (replied)",
      "pause     security: approved by dana (replied)",
    ]);
  });
});
