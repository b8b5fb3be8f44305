import { type ChildProcess, spawn } from "node:child_process";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type { BenchSide, PhaseTimings, Series } from "./measure.js";
import type { OpenedSide, PairScenario, ScenarioContext, SideName } from "./scenarios/scenario.js";

// `--isolate`: each side of a pair scenario in a process of its own. The runner keeps the turns (warm-up,
// then chunks in alternation, as in one process) and asks a side's process for each series; that process
// runs and times the executions itself, so what the messages cost is in neither side's figures, and a
// side's code (LangGraph's own included) is compiled for that side's work alone, as in a deployment.

const WORKER = fileURLToPath(new URL("./side-worker.ts", import.meta.url));
/** The bench's own directory: where tsx finds the tsconfig the runner compiles with. */
const BENCH_DIR = dirname(dirname(WORKER));
/** How many of a side's last stderr lines its failure carries. */
const STDERR_KEPT = 40;
/** How long after a side's exit its stderr may still be read before its failure is told. */
const STDERR_GRACE_MS = 500;

/** What the runner tells a side's process: the scenario and side to open, and what it runs on. */
export interface SideWorkerConfig {
  readonly scenario: string;
  readonly side: SideName;
  /** The run's context, without its functions (progress lines go to the process's stderr). */
  readonly context: Omit<ScenarioContext, "progress" | "trace" | "sqlTimings" | "postgresServer">;
}

export type ToSideWorker =
  | { readonly type: "open"; readonly config: SideWorkerConfig }
  | { readonly type: "run"; readonly first: number; readonly count: number }
  | { readonly type: "describe" }
  | { readonly type: "close" };

export type FromSideWorker =
  | { readonly type: "ready" }
  | { readonly type: "described"; readonly description: string }
  | {
      readonly type: "ran";
      readonly series: Series;
      /** The parts of executions the side timed in this series, `[side, phase, ms]`. */
      readonly phases: [string, string, number][];
    }
  | { readonly type: "closed" }
  | { readonly type: "failed"; readonly message: string };

/** How the sides' processes start. */
export interface SideProcessOptions {
  /**
   * Run AGBoss's packages as built (`dist`, what an install gets) instead of their TypeScript sources;
   * both sides' processes start the same way.
   */
  readonly built: boolean;
  readonly progress: (line: string) => void;
}

/** One side of a pair scenario in a process of its own, as the runner sees it. */
class SideProcess implements BenchSide {
  readonly label: SideName;
  readonly #child: ChildProcess;
  readonly #phases: PhaseTimings;
  readonly #stderr: string[] = [];
  /** The one message awaited (the runner asks one thing at a time). */
  #waiting: { type: FromSideWorker["type"]; settle: (m: FromSideWorker | Error) => void } | undefined;
  #exited: Error | undefined;

  constructor(side: SideName, phases: PhaseTimings, options: SideProcessOptions) {
    this.label = side;
    this.#phases = phases;
    const conditions = options.built ? [] : ["--conditions=@agboss/source"];
    // The config (a Postgres URL among it) goes by message, not on a command line others can read.
    this.#child = spawn(process.execPath, [...conditions, "--import", import.meta.resolve("tsx"), WORKER], {
      cwd: BENCH_DIR,
      stdio: ["ignore", "inherit", "pipe", "ipc"],
    });
    let buffered = "";
    const keep = (line: string) => {
      this.#stderr.push(line);
      if (this.#stderr.length > STDERR_KEPT) this.#stderr.shift();
      options.progress(`  [${side}] ${line}`);
    };
    this.#child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) keep(line);
    });
    this.#child.on("message", (message: FromSideWorker) => {
      const waiting = this.#waiting;
      if (waiting === undefined) return;
      this.#waiting = undefined;
      if (message.type === waiting.type) waiting.settle(message);
      else if (message.type === "failed")
        waiting.settle(new Error(`the ${this.label} process failed: ${message.message}`));
      else
        waiting.settle(new Error(`the ${this.label} process answered ${message.type}, not ${waiting.type}`));
    });
    // Spawning failed, or a message could not be sent: the process is of no more use.
    this.#child.on("error", (error) => this.#gone(new Error(`the ${this.label} process: ${error.message}`)));
    // Once its stderr is read to the end, so a crash's last lines are in the error; not longer than
    // STDERR_GRACE_MS, since a process it started (tsx's esbuild) may hold the pipe open past its exit.
    const stderrEnded = new Promise<void>((resolve) => {
      if (this.#child.stderr === null) resolve();
      else this.#child.stderr.once("end", () => resolve());
    });
    this.#child.once("exit", (code, signal) => {
      void Promise.race([stderrEnded, sleep(STDERR_GRACE_MS)]).then(() => {
        if (buffered !== "") keep(buffered);
        buffered = "";
        const stderr = this.#stderr.length > 0 ? `:\n${this.#stderr.join("\n")}` : "";
        this.#gone(new Error(`the ${this.label} process exited (${signal ?? code})${stderr}`));
      });
    });
  }

  /** Marks the process gone with `error`, failing what waited on it. */
  #gone(error: Error): void {
    this.#exited ??= error;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.settle(error);
  }

  /** Sends `message` (if any) and resolves with the reply of type `type`. */
  ask<T extends FromSideWorker["type"]>(
    type: T,
    message?: ToSideWorker,
  ): Promise<Extract<FromSideWorker, { type: T }>> {
    if (this.#exited !== undefined) return Promise.reject(this.#exited);
    if (this.#waiting !== undefined)
      return Promise.reject(new Error(`the ${this.label} process is still busy with ${this.#waiting.type}`));
    return new Promise((resolve, reject) => {
      this.#waiting = {
        type,
        settle: (m) => (m instanceof Error ? reject(m) : resolve(m as Extract<FromSideWorker, { type: T }>)),
      };
      if (message !== undefined)
        this.#child.send(message, (error) => {
          if (error !== null) this.#gone(error);
        });
    });
  }

  runOnce(): Promise<void> {
    return Promise.reject(new Error("a side in a process of its own runs series only"));
  }

  async runSeries(first: number, count: number): Promise<Series> {
    const ran = await this.ask("ran", { type: "run", first, count });
    for (const [side, phase, ms] of ran.phases) this.#phases.add(side, phase, ms);
    return ran.series;
  }

  async close(): Promise<void> {
    if (this.#exited !== undefined) return;
    const exited = this.#exit();
    let failure: unknown;
    try {
      await this.ask("closed", { type: "close" });
    } catch (error) {
      failure = error;
    }
    if (this.#child.connected) this.#child.disconnect();
    if (this.#exited === undefined) {
      const timer = setTimeout(() => this.#child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    if (failure !== undefined) throw failure;
  }

  /** Ends the process at once, where opening it failed, and waits until it is gone. */
  async kill(): Promise<void> {
    const exited = this.#exit();
    this.#child.kill("SIGKILL");
    await exited;
  }

  /** Resolves once the process has exited (at once if it has). */
  #exit(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => this.#child.once("exit", () => resolve()));
  }
}

/**
 * Starts a process that opens `which` side of `scenario` and nothing else, and resolves once that side
 * is open and ready; the side's phases land in `phases`, as in one process.
 */
export async function openSideProcess(
  scenario: PairScenario,
  which: SideName,
  context: ScenarioContext,
  phases: PhaseTimings,
  options: SideProcessOptions,
): Promise<OpenedSide> {
  const { progress: _p, trace: _t, sqlTimings: _s, postgresServer: _ps, ...plain } = context;
  const side = new SideProcess(which, phases, options);
  try {
    await side.ask("ready", { type: "open", config: { scenario: scenario.id, side: which, context: plain } });
  } catch (error) {
    await side.kill();
    throw error;
  }
  return {
    side,
    describe: async () => {
      try {
        const { description } = await side.ask("described", { type: "describe" });
        return `${description} (a process of its own)`;
      } catch (error) {
        return `(a process of its own, which did not say what it ran on: ${String(error)})`;
      }
    },
  };
}
