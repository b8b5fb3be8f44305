import { type ChildProcess, spawn } from "node:child_process";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { BenchSide, PhaseTimings, Series } from "./measure.js";
import type { OpenedSide, PairScenario, ScenarioContext, SideName } from "./scenarios/scenario.js";

// `--isolate`: each side of a pair scenario in a process of its own. The runner keeps the turns (warm-up,
// then chunks in alternation, as in one process) and asks a side's process for each series; that process
// runs and times the executions itself, so what the messages cost is in neither side's figures, and a
// side's code (LangGraph's own included) is compiled for that side's work alone, as in a deployment.

const WORKER = fileURLToPath(new URL("./side-worker.ts", import.meta.url));
const REPO_DIR = dirname(dirname(dirname(WORKER)));

/** What the runner tells a side's process: the scenario and side to open, and what it runs on. */
export interface SideWorkerConfig {
  readonly scenario: string;
  readonly side: SideName;
  /** The run's context, without its functions (progress lines go to the process's stderr). */
  readonly context: Omit<ScenarioContext, "progress" | "trace" | "sqlTimings" | "postgresServer">;
}

export type ToSideWorker =
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

  constructor(config: SideWorkerConfig, phases: PhaseTimings, options: SideProcessOptions) {
    this.label = config.side;
    this.#phases = phases;
    const conditions = options.built ? [] : ["--conditions=@agboss/source"];
    this.#child = spawn(
      process.execPath,
      [...conditions, "--import", import.meta.resolve("tsx"), WORKER, JSON.stringify(config)],
      { cwd: REPO_DIR, stdio: ["ignore", "inherit", "pipe", "ipc"] },
    );
    let buffered = "";
    this.#child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        if (this.#stderr.length < 40) this.#stderr.push(line);
        options.progress(`  [${config.side}] ${line}`);
      }
    });
    this.#child.on("message", (message: FromSideWorker) => {
      const waiting = this.#waiting;
      if (waiting === undefined) return;
      if (message.type === "failed") {
        this.#waiting = undefined;
        waiting.settle(new Error(`the ${this.label} process failed: ${message.message}`));
      } else if (message.type === waiting.type) {
        this.#waiting = undefined;
        waiting.settle(message);
      }
    });
    this.#child.once("exit", (code, signal) => {
      const stderr = this.#stderr.length > 0 ? `:\n${this.#stderr.join("\n")}` : "";
      this.#exited = new Error(`the ${this.label} process exited (${signal ?? code})${stderr}`);
      const waiting = this.#waiting;
      this.#waiting = undefined;
      waiting?.settle(this.#exited);
    });
  }

  /** Sends `message` (if any) and resolves with the reply of type `type`. */
  ask<T extends FromSideWorker["type"]>(
    type: T,
    message?: ToSideWorker,
  ): Promise<Extract<FromSideWorker, { type: T }>> {
    if (this.#exited !== undefined) return Promise.reject(this.#exited);
    return new Promise((resolve, reject) => {
      this.#waiting = {
        type,
        settle: (m) => (m instanceof Error ? reject(m) : resolve(m as Extract<FromSideWorker, { type: T }>)),
      };
      if (message !== undefined) this.#child.send(message);
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
    const exited = new Promise<void>((resolve) => this.#child.once("exit", () => resolve()));
    try {
      await this.ask("closed", { type: "close" });
    } catch {
      // It is gone already; nothing is left to release.
    }
    if (this.#exited === undefined) {
      const timer = setTimeout(() => this.#child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
  }

  /** Ends the process at once, where opening it failed. */
  kill(): void {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill("SIGKILL");
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
  const side = new SideProcess({ scenario: scenario.id, side: which, context: plain }, phases, options);
  try {
    await side.ask("ready");
    return {
      side,
      describe: async () =>
        `${(await side.ask("described", { type: "describe" })).description} (a process of its own)`,
    };
  } catch (error) {
    side.kill();
    throw error;
  }
}
