import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";

// Drives the real program through a pseudo-terminal (util-linux `script`), as a person would: it reads
// what the program shows and presses keys. The pty is 200 columns wide so no line wraps.
const exampleDir = join(import.meta.dirname, "..");
export const Keys = { down: "\x1b[B", up: "\x1b[A", enter: "\r", ctrlC: "\x03" } as const;

/** The program under a pseudo-terminal, its output kept as plain text. */
export class Session {
  readonly #child: ChildProcess;
  readonly exited: Promise<number | null>;
  #raw = "";
  #read = 0;

  /** Starts `entry` (a path under the example, e.g. `src/approvals/main.ts`) on its own SQLite file. */
  constructor(entry: string, sqlitePath: string) {
    const command = `stty cols 200 rows 50 && exec node --import tsx --conditions=@agboss/source ${entry}`;
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

  /** Waits for the program to exit and returns its exit code; fails with what it shows if it does not. */
  waitForExit(timeoutMs = 8_000): Promise<number | null> {
    return Promise.race([
      this.exited,
      new Promise<null>((_, reject) =>
        setTimeout(() => reject(new Error(`no exit:\n${this.text}`)), timeoutMs),
      ),
    ]);
  }

  /** What the program showed, line by line, trimmed. */
  lines(): string[] {
    return this.text.split("\n").map((l) => l.trim());
  }

  kill(): void {
    if (this.#child.exitCode === null) this.#child.kill("SIGKILL");
  }
}
