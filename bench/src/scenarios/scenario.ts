import type { BenchSide } from "../measure.js";
import type { CallTimings } from "../store-timing.js";

/** Where a scenario's sides keep their state. */
export type Backend = "sqlite" | "memory";

/** SQLite's durability setting for a run. */
export type Synchronous = "default" | "NORMAL" | "FULL";

/** What a scenario is given when it opens its sides. */
export interface ScenarioContext {
  /** A fresh temporary directory for this scenario's database files; removed after the run. */
  readonly dir: string;
  /**
   * Where both sides keep their state: `sqlite` (the benchmark: a file each) or `memory` (AGBoss's
   * in-memory store against LangGraph's MemorySaver), which shows what the runtimes cost without disks.
   */
  readonly backend: Backend;
  /**
   * SQLite's `synchronous` on both sides, or `default` for each library's own (AGBoss's store: FULL;
   * SqliteSaver: better-sqlite3's WAL default, NORMAL).
   */
  readonly synchronous: Synchronous;
  readonly progress: (line: string) => void;
  /** With `--trace-store`: where each side's store (or checkpointer) calls are timed. */
  readonly trace?: { readonly agboss: CallTimings; readonly langgraph: CallTimings } | undefined;
}

/** The two sides of a scenario, opened and ready to run. */
export interface OpenedScenario {
  readonly agboss: BenchSide;
  readonly langgraph: BenchSide;
  /** Facts worth printing after the run, e.g. each database's file, journal mode and sync level. */
  notes(): readonly string[];
  /** The database file of each side, to match SQL timings to sides; undefined in memory. */
  readonly files?: { readonly agboss: string; readonly langgraph: string } | undefined;
}

/**
 * One benchmark: the same work done by AGBoss and by raw LangGraph, measured in the same process.
 *
 * Planned next to `one-tool-agent` (same shape, one file each under `scenarios/`):
 * - `pause-resume`: a tool that waits for a channel's decision, answered by `app.resume`, against
 *   LangGraph's `interrupt()` and `Command({ resume })` on `SqliteSaver`; one round trip per execution.
 * - `resume-latency-1k` / `resume-latency-100k`: the latency of one resume while 1,000 or 100,000
 *   other pauses wait in the store (set up once, outside the timed part).
 */
export interface Scenario {
  /** Selects it on the command line (`--scenario one-tool-agent`). */
  readonly id: string;
  /** The row's name in the table. */
  readonly title: string;
  /** One sentence on what an execution does. */
  readonly description: string;
  open(context: ScenarioContext): Promise<OpenedScenario>;
}
