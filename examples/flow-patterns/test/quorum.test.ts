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
      "stty cols 200 rows 50 && exec node --import tsx --conditions=@agboss/source src/quorum/main.ts";
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
  dataDir = mkdtempSync(join(tmpdir(), "agboss-quorum-"));
  session = new Session(join(dataDir, "quorum.sqlite"));
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
    exitCode = await Promise.race([
      session.exited,
      new Promise<null>((_, reject) =>
        setTimeout(() => reject(new Error(`no exit:\n${session.text}`)), 8_000),
      ),
    ]);
  } finally {
    session.kill();
  }
}, 30_000);

afterAll(() => {
  session?.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The program's lines, trimmed. */
function lines(): string[] {
  return session.text.split("\n").map((l) => l.trim());
}

describe("the quorum example, driven through a terminal", () => {
  test("runs on the SQLite file it was given and exits cleanly", () => {
    expect(session.text).toContain(join(dataDir, "quorum.sqlite"));
    expect(exitCode).toBe(0);
    expect(session.text).not.toMatch(/\n\s+at /);
  });

  test("three reviewers ask at once", () => {
    const text = session.text;
    expect(text).toContain("status    paused: 3 sign-offs wait for dana; two of them decide");
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
    const all = lines();
    expect(all).toContain(
      'output    {"text":"Release approved: legal and security signed off; finance no longer needed."}',
    );
    expect(all.find((l) => l.startsWith("status    completed"))).toBeDefined();
  });

  test("the audit trail shows two answers and one withdrawal", () => {
    const audit = lines().filter((l) => l.startsWith("pause "));
    expect(audit.sort()).toEqual([
      "pause     finance: withdrawn before anyone answered (withdrawn)",
      "pause     legal: approved by dana (replied)",
      "pause     security: approved by dana (replied)",
    ]);
  });
});
