import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

// Drives the real program through a pseudo-terminal (util-linux `script`), as a person would: it reads
// what the program shows and presses keys. The pty is 200 columns wide so no line wraps.
const exampleDir = join(import.meta.dirname, "..");
const Keys = { down: "\x1b[B", up: "\x1b[A", enter: "\r", ctrlC: "\x03" } as const;

/** The program under a pseudo-terminal, its output kept as plain text. */
class Session {
  readonly #child: ChildProcess;
  readonly exited: Promise<number | null>;
  #raw = "";
  #read = 0;

  constructor(sqlitePath: string) {
    const command =
      "stty cols 200 rows 50 && exec node --import tsx --conditions=@agboss/source src/parallel/main.ts";
    this.#child = spawn("script", ["-qfec", command, "/dev/null"], {
      cwd: exampleDir,
      env: { ...process.env, AGBOSS_SQLITE_PATH: sqlitePath, TERM: "xterm", NO_COLOR: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const keep = (chunk: Buffer) => {
      this.#raw += chunk.toString();
    };
    this.#child.stdout?.on("data", keep);
    this.#child.stderr?.on("data", keep);
    this.exited = new Promise((resolve) => this.#child.on("exit", resolve));
  }

  /** Everything shown so far, escape sequences and carriage returns removed. */
  get text(): string {
    return stripVTControlCharacters(this.#raw).replaceAll("\r", "");
  }

  /** Waits until `text` appears after what earlier waits consumed. */
  async waitFor(text: string, timeoutMs = 8_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const at = this.text.indexOf(text, this.#read);
      if (at >= 0) {
        this.#read = at;
        return;
      }
      if (Date.now() > deadline)
        throw new Error(`"${text}" did not appear; the terminal shows:\n${this.text}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** In the select prompt asking `message`, moves to the choice containing `label` and presses Enter. */
  async choose(message: string, label: string): Promise<void> {
    await this.waitFor(message);
    const deadline = Date.now() + 8_000;
    for (;;) {
      const text = this.text;
      const frame = text.slice(Math.max(text.lastIndexOf(`? ${message}`), this.#read)).split("\n");
      const choices = frame.filter((l) => l.startsWith("❯ ") || l.startsWith("  "));
      const cursor = choices.findIndex((l) => l.startsWith("❯ "));
      const target = choices.findIndex((l) => l.includes(label));
      if (cursor >= 0 && target >= 0) {
        const key = target > cursor ? Keys.down : Keys.up;
        await this.press(...Array.from({ length: Math.abs(target - cursor) }, () => key), Keys.enter);
        this.#read = text.length;
        return;
      }
      if (Date.now() > deadline)
        throw new Error(`no choice "${label}" under "${message}"; the terminal shows:\n${text}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  async press(...keys: string[]): Promise<void> {
    for (const key of keys) {
      this.#child.stdin?.write(key);
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
  }

  kill(): void {
    if (this.#child.exitCode === null) this.#child.kill("SIGKILL");
  }
}

let dataDir: string;
let session: Session;
let exitCode: number | null;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "agboss-parallel-"));
  session = new Session(join(dataDir, "parallel.sqlite"));
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
    exitCode = await Promise.race([
      session.exited,
      new Promise<null>((_, reject) =>
        setTimeout(() => reject(new Error(`no exit:\n${session.text}`)), 8_000),
      ),
    ]);
  } finally {
    session.kill();
  }
}, 40_000);

afterAll(() => {
  session?.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The program's lines, trimmed. */
function lines(): string[] {
  return session.text.split("\n").map((l) => l.trim());
}

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
  });

  test("the join waits for both answers: the first leaves one waiting, the second completes the execution", () => {
    const text = session.text;
    expect(text).toMatch(/✖ rejected reserve-budget-tool: execution \S+ waits for 1 more answer/);
    expect(text).toMatch(/✔ approved sign-contract-tool: execution \S+ completed/);
    expect(text).toContain("No questions left for dana.");
  });

  test("only the approved tool ran, and the summary read every branch's outcome in launch order", () => {
    const all = lines();
    expect(all).toContain("tools ran sign-contract-tool");
    expect(all).toContain(
      "summary   Legal: signed ctr_2291 with Acme Corp. Finance: the call was rejected by dana: over budget this quarter. Ops: delivery fits the week 32 slot.",
    );
    expect(all.find((l) => l.startsWith("status    completed"))).toBeDefined();
  });

  test("the audit trail says who answered what", () => {
    const audit = lines().filter((l) => l.startsWith("pause "));
    expect(audit.sort()).toEqual([
      "pause     reserve-budget-tool: rejected (over budget this quarter) by dana (replied)",
      "pause     sign-contract-tool: approved by dana (replied)",
    ]);
  });
});

describe("stopping the parallel example with Ctrl-C", () => {
  test("says the questions keep waiting, with no stack trace", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agboss-parallel-"));
    const stopped = new Session(join(dir, "parallel.sqlite"));
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
