import type { SqliteWalCheckpoints } from "@agboss/store-sqlite";
import type { BenchSide, MeasureOptions, PhaseTimings } from "../measure.js";
import type { PostgresServer, PostgresTarget } from "../postgres.js";
import type { CallTimings } from "../store-timing.js";

/** Where a scenario's sides keep their state. */
export type Backend = "sqlite" | "memory" | "postgres";

/** Where AGBoss's SQLite store copies its write-ahead log back into the file (the store's own setting). */
export type WalCheckpoints = SqliteWalCheckpoints;

/** SQLite's durability setting for a run. */
export type Synchronous = "default" | "NORMAL" | "FULL";

/** What a scenario is given when it opens its sides. */
export interface ScenarioContext {
  /** A fresh temporary directory for this scenario's database files; removed after the run. */
  readonly dir: string;
  /**
   * Where both sides keep their state: `sqlite` (the benchmark: a file each), `postgres` (AGBoss's
   * Postgres store against LangGraph's PostgresSaver, a schema each on one server) or `memory` (AGBoss's
   * in-memory store against LangGraph's MemorySaver), which shows what the runtimes cost without disks.
   */
  readonly backend: Backend;
  /** With `--backend postgres`: the server and the two fresh schemas made for this scenario. */
  readonly postgres?: PostgresTarget | undefined;
  /** With `--backend postgres`, for a solo scenario that makes its own schemas (`recovery`). */
  readonly postgresServer?: PostgresServer | undefined;
  /**
   * SQLite's `synchronous` on both sides, or `default` for each library's own (AGBoss's store: FULL;
   * SqliteSaver: better-sqlite3's WAL default, NORMAL).
   */
  readonly synchronous: Synchronous;
  /** SQLite: where AGBoss's store checkpoints its log (`--wal-checkpoints`; the store's default: background). */
  readonly walCheckpoints: WalCheckpoints;
  readonly progress: (line: string) => void;
  /** With `--trace-store`: where each side's store (or checkpointer) calls are timed. */
  readonly trace?: { readonly agboss: CallTimings; readonly langgraph: CallTimings } | undefined;
  /**
   * With `--trace-store` on SQLite: the SQL statement timings of a database file (for a scenario that
   * times its own calls; pair scenarios get theirs matched by the runner through `files`).
   */
  readonly sqlTimings?: ((file: string) => CallTimings) | undefined;
  /** `resume-latency`: how many pauses wait at each level, ascending (default 0, 10,000 then 100,000). */
  readonly pendingLevels: readonly number[];
  /** `resume-latency`: measured pauses and resumes per level. */
  readonly resumes: number;
  /** `recovery`: how many interrupted executions are recovered. */
  readonly recover: number;
  /** `recovery`: resumes in the comparison sample. */
  readonly recoveryResumes: number;
  /** `pending-heap`: how many pauses are made while the heap is weighed. */
  readonly heapPauses: number;
  /** How pair scenarios are measured (`--iterations`, `--rounds`, …), for a solo scenario that measures two ways of AGBoss the same way. */
  readonly measure: Omit<MeasureOptions, "progress" | "afterWarmup">;
}

/** A side of a pair scenario: AGBoss, or raw LangGraph. */
export type SideName = "agboss" | "langgraph";

/** One side of a pair scenario, opened and ready to run. */
export interface OpenedSide {
  readonly side: BenchSide;
  /** What it runs on, for the scenario's notes (asked after the run: a database's settings, say). */
  describe(): Promise<string>;
}

/** What a {@link SoloScenario} measured: its own table and its figures for `BENCH_RESULT`. */
export interface SoloResult {
  /** Printed after the pair table, as they are. */
  readonly lines: readonly string[];
  /** Its figures, JSON-serialisable. */
  readonly figures: Record<string, unknown>;
  /** Checks the scenario made that failed; the run prints them and exits with code 1. */
  readonly failures?: readonly string[];
}

interface ScenarioBase {
  /** Selects it on the command line (`--scenario one-tool-agent`). */
  readonly id: string;
  /** The row's name in the table. */
  readonly title: string;
  /** One sentence on what an execution does. */
  readonly description: string;
  /** The `--backend`s it can run on. */
  readonly backends: readonly Backend[];
  /** Left out of a run that names no scenario (it is long, or starts processes): `--scenario` runs it. */
  readonly onlyWhenNamed?: boolean;
}

/**
 * One benchmark: the same work done by AGBoss and by raw LangGraph, measured by `measurePair`
 * (`one-tool-agent`, `pause-resume`), in the bench's process or, with `--isolate`, each side in a
 * process of its own.
 */
export interface PairScenario extends ScenarioBase {
  readonly kind: "pair";
  /** The AGBoss application's name (where `--trace-store` finds its SQL on Postgres). */
  readonly appName: string;
  /** Printed before the sides' own notes. */
  readonly notes?: readonly string[];
  /**
   * Opens one side (its store or checkpointer, then its app or graph) and nothing of the other, so a
   * process of its own runs that side's code alone. A side that times parts of an execution adds them
   * to `phases`.
   */
  openSide(context: ScenarioContext, which: SideName, phases: PhaseTimings): Promise<OpenedSide>;
}

/**
 * A benchmark that measures AGBoss alone, its own way, and prints its own table (`resume-latency`:
 * how one figure moves as the store fills up).
 */
export interface SoloScenario extends ScenarioBase {
  readonly kind: "solo";
  run(context: ScenarioContext): Promise<SoloResult>;
}

export type Scenario = PairScenario | SoloScenario;
