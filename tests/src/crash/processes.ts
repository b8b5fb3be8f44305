import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const workerScript = join(here, "crash-worker.ts");
const testsDir = join(here, "..", "..");

/** A line a worker printed, with when the parent read it. */
export interface WorkerLine {
  readonly kind?: string;
  readonly receivedAt: number;
  readonly [field: string]: unknown;
}

/** Every worker still alive, so none outlives the suite, whatever fails. */
const live = new Set<Worker>();
process.on("exit", () => {
  for (const worker of live) worker.forceKill();
});

/** Kills every worker still running (a stopped one too: SIGKILL ends it). */
export async function reapAll(): Promise<void> {
  await Promise.all([...live].map((worker) => worker.kill9()));
}

/** Thrown when a point a trial waits for is not reached (the worker ended first, or the time passed). */
export class PointMissedError extends Error {}

/** One worker process: `node --import tsx --conditions=@agboss/source crash-worker.ts <mode> ...`. */
export class Worker {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly lines: WorkerLine[] = [];
  stderr = "";
  /** We killed it (kill -9), on purpose or to reap it. */
  killedByUs = false;
  /** We had to kill it because it did not end in time. */
  hung = false;
  exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #waiters = new Set<() => void>();

  constructor(
    readonly name: string,
    args: readonly string[],
    env: Record<string, string>,
  ) {
    this.child = spawn(
      process.execPath,
      ["--import", "tsx", "--conditions=@agboss/source", workerScript, ...args],
      { cwd: testsDir, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
    );
    if (this.child.pid === undefined) throw new Error(`could not start worker ${name}`);
    this.pid = this.child.pid;
    live.add(this);
    let buffered = "";
    this.child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      let newline = buffered.indexOf("\n");
      while (newline >= 0) {
        const text = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf("\n");
        try {
          this.lines.push({ ...(JSON.parse(text) as object), receivedAt: Date.now() });
        } catch {
          this.lines.push({ kind: "text", text, receivedAt: Date.now() });
        }
        this.#wake();
      }
    });
    this.child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      this.stderr += chunk;
    });
    this.exit = new Promise((resolve) => {
      this.child.on("exit", (code, signal) => {
        this.exited = { code, signal };
        live.delete(this);
        this.#wake();
        resolve(this.exited);
      });
    });
  }

  #wake(): void {
    for (const wake of [...this.#waiters]) wake();
  }

  /** The first line (already printed or to come) that matches; fails once the worker ended without it. */
  async waitLine(
    match: (line: WorkerLine) => boolean,
    what: string,
    timeoutMs = 30_000,
  ): Promise<WorkerLine> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = this.lines.find(match);
      if (line !== undefined) return line;
      if (this.exited !== undefined)
        throw new PointMissedError(`${this.name} ended (${this.describeExit()}) before ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new PointMissedError(`${this.name}: no ${what} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.#waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.#waiters.add(done);
      });
    }
  }

  /** kill -9, and waits until the process is gone. */
  async kill9(): Promise<void> {
    if (this.exited !== undefined) return;
    this.killedByUs = true;
    this.forceKill();
    await this.exit;
  }

  forceKill(): void {
    if (this.exited !== undefined) return;
    try {
      process.kill(this.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }

  /** SIGSTOP, and waits until the kernel shows the process stopped. */
  async stop(): Promise<void> {
    process.kill(this.pid, "SIGSTOP");
    const deadline = Date.now() + 5_000;
    while (processState(this.pid) !== "T") {
      if (this.exited !== undefined) throw new PointMissedError(`${this.name} ended before it stopped`);
      if (Date.now() > deadline) throw new Error(`${this.name} (pid ${this.pid}) did not stop`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  resume(): void {
    process.kill(this.pid, "SIGCONT");
  }

  /** Waits for the worker to end; kills it (and counts it hung) when it does not in time. */
  async waitExit(timeoutMs: number): Promise<void> {
    if (this.exited !== undefined) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), timeoutMs);
    });
    const outcome = await Promise.race([this.exit, late]);
    clearTimeout(timer);
    if (outcome === "late") {
      this.hung = true;
      await this.kill9();
    }
  }

  /** The worker failed on its own: exited non-zero (not by our kill), hit an uncaught error, or hung. */
  crashed(): boolean {
    if (this.hung) return true;
    if (this.stderr.includes("CRASH-WORKER-UNCAUGHT")) return true;
    if (this.lines.some((l) => l.kind === "hung")) return true;
    if (this.exited === undefined || this.killedByUs) return false;
    return this.exited.code !== 0;
  }

  describeExit(): string {
    if (this.exited === undefined) return "running";
    const how = this.exited.signal ?? `code ${this.exited.code}`;
    const uncaught = /CRASH-WORKER-UNCAUGHT [^\n]*/.exec(this.stderr)?.[0];
    return uncaught === undefined ? how : `${how}, ${uncaught}`;
  }
}

/** The one-letter state of a Linux process (R, S, T, Z...), from /proc. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch {
    return undefined;
  }
}
