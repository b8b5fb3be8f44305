import type { BenchSide, MeasureOptions, PhaseTimings } from "../measure.js";
import type { PostgresServer, PostgresTarget } from "../postgres.js";
import type { CallTimings } from "../store-timing.js";

/** Where a scenario's sides keep their state. */
export type Backend = "sqlite" | "memory" | "postgres";

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

/** The two sides of a scenario, opened and ready to run. */
export interface OpenedScenario {
  readonly agboss: BenchSide;
  readonly langgraph: BenchSide;
  /** Facts worth printing after the run, e.g. each database's file, journal mode and sync level. */
  notes(): readonly string[];
  /**
   * Where the SQL tracer files each side's statements, to match SQL timings to sides: the database file
   * on SQLite, the connections' `application_name` on Postgres; undefined in memory.
   */
  readonly files?: { readonly agboss: string; readonly langgraph: string } | undefined;
  /**
   * Where a side times the parts of one execution (e.g. `pause` and `resume` of a round trip); the
   * runner forgets what warm-up put there and prints each part's p50/p99 per side.
   */
  readonly phases?: PhaseTimings | undefined;
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
 * One benchmark: the same work done by AGBoss and by raw LangGraph, measured in the same process by
 * `measurePair` (`one-tool-agent`, `pause-resume`).
 */
export interface PairScenario extends ScenarioBase {
  readonly kind: "pair";
  open(context: ScenarioContext): Promise<OpenedScenario>;
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
