import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { pairBackend } from "./backends.js";
import {
  type BenchSide,
  measurePair,
  type PairResult,
  type PhaseSummary,
  PhaseTimings,
  type SideSummary,
} from "./measure.js";
import {
  DEFAULT_POSTGRES_URL,
  describeUrl,
  PostgresServer,
  type PostgresTarget,
  PostgresUnavailableError,
  tracePostgres,
} from "./postgres.js";
import { PROFILE_INTERVAL_US, profileSide, type SideProfile } from "./profile.js";
import { countRunnables } from "./runnable-count.js";
import { oneToolAgentScenario } from "./scenarios/one-tool-agent.js";
import { pauseResumeScenario } from "./scenarios/pause-resume.js";
import { HEAP_MARKS, pendingHeapScenario } from "./scenarios/pending-heap.js";
import { recoveryScenario } from "./scenarios/recovery.js";
import { resumeLatencyScenario } from "./scenarios/resume-latency.js";
import type {
  Backend,
  OpenedSide,
  PairScenario,
  Scenario,
  ScenarioContext,
  SideName,
  SoloResult,
  SoloScenario,
  Synchronous,
  WalCheckpoints,
} from "./scenarios/scenario.js";
import { streamOverheadScenario } from "./scenarios/stream-overhead.js";
import { openSideProcess } from "./side-process.js";
import { CallTimings, traceSqlite } from "./store-timing.js";
import { type WalPages, walPagesOfPair } from "./wal-pages.js";

/** Every scenario, in the order they run (`recovery` only when named). */
const SCENARIOS: readonly Scenario[] = [
  oneToolAgentScenario,
  pauseResumeScenario,
  resumeLatencyScenario,
  streamOverheadScenario,
  pendingHeapScenario,
  recoveryScenario,
];

/** The packages AGBoss's side runs, whose `dist` `--built` needs. */
const BUILT_PACKAGES = ["core", "store-kysely", "store-sqlite", "store-postgres"] as const;
const PACKAGES_DIR = fileURLToPath(new URL("../../packages/", import.meta.url));

/** The newest modification time of a file under `dir`, or undefined when there is none. */
function newestUnder(dir: string): number | undefined {
  if (!existsSync(dir)) return undefined;
  let newest: number | undefined;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const at = statSync(join(entry.parentPath, entry.name)).mtimeMs;
    if (newest === undefined || at > newest) newest = at;
  }
  return newest;
}

/** The first package `--built` runs whose `dist` is missing or older than its sources, if any. */
function unbuiltPackage(): string | undefined {
  return BUILT_PACKAGES.find((name) => {
    const dist = newestUnder(join(PACKAGES_DIR, name, "dist"));
    const src = newestUnder(join(PACKAGES_DIR, name, "src"));
    return dist === undefined || src === undefined || dist < src;
  });
}

/** `resume-latency`'s levels of waiting pauses; `--skip-100k` keeps the first two, `--with-1m` adds 1,000,000. */
const PENDING_LEVELS = [0, 10_000, 100_000] as const;

/**
 * The fraction of raw LangGraph's executions per second AGBoss is to reach (the performance targets: a
 * round trip at 1.0x on SQLite and 0.9x on Postgres, the one-tool agent at 1.0x on both), or undefined
 * where none is set: in memory, at each library's own SQLite durability (not equal), other scenarios.
 */
function targetOf(
  scenarioId: string,
  options: Pick<BenchOptions, "backend" | "synchronous">,
): number | undefined {
  if (options.backend === "memory") return undefined;
  if (options.backend === "sqlite" && options.synchronous === "default") return undefined;
  if (scenarioId === oneToolAgentScenario.id) return 1.0;
  if (scenarioId === pauseResumeScenario.id) return options.backend === "postgres" ? 0.9 : 1.0;
  return undefined;
}

const USAGE = `Usage: pnpm --filter @agboss/bench bench [-- options]

  --iterations N   measured executions per side per round (default 200)
  --warmup N       executions per side before measuring (default 100)
  --rounds N       rounds; medians over rounds are reported (default 3)
  --chunk N        executions a side runs before the other takes its turn within a round (default 10)
  --backend B      sqlite (default: a SQLite file per side), postgres (postgresStore vs PostgresSaver, a
                   fresh schema each on one server) or memory (in-memory store vs MemorySaver)
  --postgres-url U with --backend postgres: the server and database (default AGBOSS_POSTGRES_URL, else
                   ${DEFAULT_POSTGRES_URL})
  --synchronous S  SQLite only: full (default: both sides commit under FULL, the AGBoss store's own
                   setting), normal on both, or own (each library's own: AGBoss FULL, SqliteSaver NORMAL)
  --wal-checkpoints W  SQLite only: where AGBoss's store copies its log into the file: background (default,
                   the store's own: on a thread of its own) or inline (in the commit that fills it, as
                   SqliteSaver's connection does)
  --trace-store    also time every store/checkpointer call and SQL statement per side (slows both a little),
                   and count the LangChain runnables each side starts (langchain.runWithConfig); on
                   SQLite, also count the pages each side writes per execution, by table and index
                   and by commit (on fresh files, after)
  --isolate        pair scenarios: each side in a process of its own, the turns kept (a deployment runs
                   one of them, not both in one process); refused when only solo scenarios would run
  --profile DIR    pair scenarios: after the rounds, each side runs alone under V8's sampling profiler
                   (every 100 µs, the main thread only); prints its self time per execution by package
                   (native work by the code that led to it) and writes (over an earlier run's)
                   DIR/<scenario>-<backend>-<side>.cpuprofile; not with --isolate or --trace-store
  --profile-executions N  executions per side in that profiled series (default 1,000, at most 20,000)
  --built          with --isolate: AGBoss's packages as built (pnpm build), what an install runs, instead
                   of their TypeScript sources
  --scenario ID    run only this scenario (repeatable); one of: ${SCENARIOS.map((s) => s.id).join(", ")}
                   (resume-latency and recovery run on sqlite and postgres only; recovery only when named)
  --resumes N      resume-latency: measured pauses and resumes per store (default 500); recovery: resumes
                   in the normal-resume sample it compares with (default 500)
  --skip-100k      resume-latency: only the stores with 0 and 10,000 waiting pauses (a quick run)
  --with-1m        resume-latency: also a store with 1,000,000 waiting pauses (its seed takes minutes and
                   about 11 GB of disk on SQLite)
  --recover N      recovery: interrupted executions to recover (default 10000)
  --heap-pauses N  pending-heap: pauses made while the process heap is weighed (default 100000)
  --help           print this`;

interface BenchOptions {
  readonly iterations: number;
  readonly warmup: number;
  readonly rounds: number;
  readonly chunk: number;
  readonly backend: Backend;
  /** With `--backend postgres`: the server both sides use. */
  readonly postgresUrl: string | undefined;
  readonly synchronous: Synchronous;
  readonly walCheckpoints: WalCheckpoints;
  readonly traceStore: boolean;
  /** With `--profile`: where each side's profile goes, and how many executions it covers. */
  readonly profile: { readonly dir: string; readonly executions: number } | undefined;
  /** Pair scenarios: each side in a process of its own. */
  readonly isolate: boolean;
  /** With `isolate`: AGBoss's packages from their `dist`, not their sources. */
  readonly built: boolean;
  readonly scenarios: readonly Scenario[];
  /** Scenarios left out because they do not run on the chosen backend (only when none was named). */
  readonly skipped: readonly Scenario[];
  readonly resumes: number;
  readonly pendingLevels: readonly number[];
  readonly recover: number;
  readonly recoveryResumes: number;
  readonly heapPauses: number;
}

function positiveInteger(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`--${name} must be an integer ≥ ${min}, got "${raw}"`);
  return value;
}

/** The most executions `--profile-executions` takes. */
const MAX_PROFILE_EXECUTIONS = 20_000;

/**
 * `--profile`'s directory, made if missing, as an absolute path: a relative one from where `pnpm` was
 * run (`INIT_CWD`), not the bench's directory it runs the script in. Throws when it cannot be written.
 */
function writableDirectory(given: string): string {
  const dir = resolve(process.env.INIT_CWD ?? process.cwd(), given);
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch (error) {
    throw new Error(
      `--profile ${given}: ${dir} cannot be made or written to (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  return dir;
}

function parseOptions(argv: readonly string[]): BenchOptions | undefined {
  const { values } = parseArgs({
    // pnpm passes a literal `--` through when options follow `pnpm bench --`.
    args: argv.filter((a) => a !== "--"),
    options: {
      iterations: { type: "string" },
      warmup: { type: "string" },
      rounds: { type: "string" },
      chunk: { type: "string" },
      backend: { type: "string" },
      "postgres-url": { type: "string" },
      synchronous: { type: "string" },
      "wal-checkpoints": { type: "string" },
      scenario: { type: "string", multiple: true },
      resumes: { type: "string" },
      "skip-100k": { type: "boolean" },
      "with-1m": { type: "boolean" },
      recover: { type: "string" },
      "heap-pauses": { type: "string" },
      "trace-store": { type: "boolean" },
      profile: { type: "string" },
      "profile-executions": { type: "string" },
      isolate: { type: "boolean" },
      built: { type: "boolean" },
      help: { type: "boolean" },
    },
    strict: true,
  });
  if (values.help === true) return undefined;
  const wanted = values.scenario ?? [];
  const unknown = wanted.filter((id) => !SCENARIOS.some((s) => s.id === id));
  if (unknown.length > 0)
    throw new Error(
      `unknown scenario ${unknown.join(", ")}; known: ${SCENARIOS.map((s) => s.id).join(", ")}`,
    );
  const backend = values.backend ?? "sqlite";
  if (backend !== "sqlite" && backend !== "memory" && backend !== "postgres")
    throw new Error(`--backend must be sqlite, postgres or memory, got "${backend}"`);
  // The headline compares the sides at equal durability: on SQLite both commit under FULL (the AGBoss
  // store's own setting) unless asked otherwise; `own` keeps each library's (SqliteSaver: NORMAL).
  const given = values.synchronous?.toUpperCase();
  const synchronous =
    given === undefined ? (backend === "sqlite" ? "FULL" : "DEFAULT") : given === "OWN" ? "DEFAULT" : given;
  if (synchronous !== "DEFAULT" && synchronous !== "NORMAL" && synchronous !== "FULL") {
    throw new Error(`--synchronous must be full, normal or own, got "${values.synchronous}"`);
  }
  if (backend === "postgres" && given !== undefined) {
    throw new Error(
      "--synchronous is a SQLite setting; on --backend postgres both sides commit under the server's own synchronous_commit",
    );
  }
  const walCheckpoints = values["wal-checkpoints"] ?? "background";
  if (walCheckpoints !== "background" && walCheckpoints !== "inline")
    throw new Error(`--wal-checkpoints must be background or inline, got "${walCheckpoints}"`);
  if (backend !== "sqlite" && values["wal-checkpoints"] !== undefined)
    throw new Error("--wal-checkpoints is a setting of the SQLite store: it needs --backend sqlite");
  if (values.built === true && values.isolate !== true)
    throw new Error("--built needs --isolate: the bench's own process runs AGBoss from its sources");
  if (values.profile !== undefined && values.isolate === true)
    throw new Error(
      "--profile profiles the bench's own process, where --isolate runs neither side: leave out --isolate",
    );
  if (values.profile !== undefined && values["trace-store"] === true)
    throw new Error(
      "--profile would count --trace-store's own timing in each side's figures: run them apart",
    );
  if (values.profile === undefined && values["profile-executions"] !== undefined)
    throw new Error("--profile-executions needs --profile DIR");
  const profileExecutions = positiveInteger("profile-executions", values["profile-executions"], 1000, 1);
  if (profileExecutions > MAX_PROFILE_EXECUTIONS)
    throw new Error(
      `--profile-executions must be at most ${MAX_PROFILE_EXECUTIONS} (a longer profile makes one very large message from the profiler), got ${profileExecutions}`,
    );
  if (values.isolate === true && values["trace-store"] === true)
    throw new Error("--trace-store times the calls made in the bench's own process: leave out --isolate");
  if (backend !== "postgres" && values["postgres-url"] !== undefined)
    throw new Error("--postgres-url needs --backend postgres");
  const chosen =
    wanted.length === 0
      ? SCENARIOS.filter((s) => s.onlyWhenNamed !== true)
      : SCENARIOS.filter((s) => wanted.includes(s.id));
  const unsupported = chosen.filter((s) => !s.backends.includes(backend));
  if (wanted.length > 0 && unsupported.length > 0) {
    throw new Error(
      `${unsupported.map((s) => s.id).join(", ")} does not run on --backend ${backend} (only on ${unsupported[0]?.backends.join(", ")})`,
    );
  }
  const running = chosen.filter((s) => s.backends.includes(backend));
  // --isolate and --profile act on pair scenarios only: with none to run they would do nothing.
  if (running.length > 0 && !running.some((s) => s.kind === "pair")) {
    const solo = running.map((s) => s.id).join(", ");
    const pairs = SCENARIOS.filter((s) => s.kind === "pair").map((s) => s.id);
    const are = running.length === 1 ? "is a solo scenario, which runs" : "are solo scenarios, which run";
    if (values.isolate === true)
      throw new Error(
        `--isolate gives each side of a pair scenario a process of its own, and ${solo} ${are} in the bench's process: leave out --isolate (and --built), or name a pair scenario (${pairs.join(", ")})`,
      );
    if (values.profile !== undefined)
      throw new Error(
        `--profile profiles the sides of a pair scenario, and ${solo} ${are} on its own: leave out --profile, or name a pair scenario (${pairs.join(", ")})`,
      );
  }
  // Checked before the rounds, which a directory that cannot be written would otherwise waste.
  const profileDir = values.profile === undefined ? undefined : writableDirectory(values.profile);
  const unbuilt = values.built === true ? unbuiltPackage() : undefined;
  if (unbuilt !== undefined)
    throw new Error(
      `--built runs AGBoss's packages from their dist, and packages/${unbuilt}/dist is missing or older than its src: run pnpm build first (pnpm build --force where turbo's cache kept an older dist)`,
    );
  return {
    backend,
    postgresUrl:
      backend === "postgres"
        ? (values["postgres-url"] ?? process.env.AGBOSS_POSTGRES_URL ?? DEFAULT_POSTGRES_URL)
        : undefined,
    traceStore: values["trace-store"] === true,
    profile: profileDir === undefined ? undefined : { dir: profileDir, executions: profileExecutions },
    isolate: values.isolate === true,
    built: values.built === true,
    synchronous: synchronous === "DEFAULT" ? "default" : synchronous,
    walCheckpoints,
    iterations: positiveInteger("iterations", values.iterations, 200, 1),
    warmup: positiveInteger("warmup", values.warmup, 100, 0),
    rounds: positiveInteger("rounds", values.rounds, 3, 1),
    chunk: positiveInteger("chunk", values.chunk, 10, 1),
    scenarios: running,
    skipped: unsupported,
    resumes: positiveInteger("resumes", values.resumes, 500, 1),
    pendingLevels: [
      ...(values["skip-100k"] === true ? PENDING_LEVELS.slice(0, 2) : PENDING_LEVELS),
      ...(values["with-1m"] === true ? [1_000_000] : []),
    ],
    recover: positiveInteger("recover", values.recover, 10_000, 1),
    recoveryResumes: positiveInteger("resumes", values.resumes, 500, 1),
    heapPauses: positiveInteger("heap-pauses", values["heap-pauses"], 100_000, HEAP_MARKS),
  };
}

interface ScenarioResult {
  readonly scenario: PairScenario;
  /** With `--trace-store`: per side, what each store call and SQL verb costs per execution. */
  readonly breakdown?: { readonly agboss: TimingRow[]; readonly langgraph: TimingRow[] } | undefined;
  /**
   * With `--trace-store` on SQLite: the pages each side's executions write, from a count of its own, or
   * why that count failed (the measured figures stand).
   */
  readonly walPages?:
    | { readonly agboss: WalPages; readonly langgraph: WalPages }
    | { readonly error: string }
    | undefined;
  /** With `--profile`: where each side's time went, from a profiled series of its own. */
  readonly profile?: { readonly agboss: SideProfile; readonly langgraph: SideProfile } | undefined;
  readonly agboss: SideSummary;
  readonly langgraph: SideSummary;
  /** The median of the per-round ratios (each round interleaves both sides). */
  readonly ratio: number;
  readonly ratioByRound: readonly number[];
  readonly notes: readonly string[];
  /** p50/p99 of each timed part of an execution, per side (e.g. a round trip's pause and resume). */
  readonly phases: readonly PhaseSummary[];
}

interface SoloScenarioResult {
  readonly scenario: SoloScenario;
  readonly result: SoloResult;
}

const progress = (line: string) => console.log(line);

type TimingRow = { name: string; calls: number; ms: number };

function contextOf(
  options: BenchOptions,
  dir: string,
  trace: ScenarioContext["trace"],
  sqlTimings?: (file: string) => CallTimings,
  postgres?: PostgresTarget,
  postgresServer?: PostgresServer,
): ScenarioContext {
  return {
    dir,
    sqlTimings,
    backend: options.backend,
    postgres,
    postgresServer,
    synchronous: options.synchronous,
    walCheckpoints: options.walCheckpoints,
    progress,
    trace,
    pendingLevels: options.pendingLevels,
    resumes: options.resumes,
    recover: options.recover,
    recoveryResumes: options.recoveryResumes,
    heapPauses: options.heapPauses,
    measure: {
      warmup: options.warmup,
      iterations: options.iterations,
      rounds: options.rounds,
      chunk: options.chunk,
    },
  };
}

async function runSoloScenario(
  scenario: SoloScenario,
  options: BenchOptions,
  sqlTimings: ((file: string) => CallTimings) | undefined,
  server: PostgresServer | undefined,
): Promise<SoloScenarioResult> {
  const dir = mkdtempSync(join(tmpdir(), `agboss-bench-${scenario.id}-`));
  progress(`▶ ${scenario.title}: ${scenario.description}`);
  const trace = options.traceStore ? { agboss: new CallTimings(), langgraph: new CallTimings() } : undefined;
  try {
    return {
      scenario,
      result: await scenario.run(contextOf(options, dir, trace, sqlTimings, undefined, server)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runScenario(
  scenario: PairScenario,
  options: BenchOptions,
  sqlTimings: ((file: string) => CallTimings) | undefined,
  server: PostgresServer | undefined,
): Promise<ScenarioResult> {
  const dir = mkdtempSync(join(tmpdir(), `agboss-bench-${scenario.id}-`));
  progress(`▶ ${scenario.title}: ${scenario.description}`);
  const trace = options.traceStore ? { agboss: new CallTimings(), langgraph: new CallTimings() } : undefined;
  const target = await server?.freshTarget(scenario.id);
  if (target !== undefined) {
    progress(
      `  postgres: schemas ${target.schemas.agboss} and ${target.schemas.langgraph}, made for this run`,
    );
  }
  try {
    const context = contextOf(options, dir, trace, undefined, target);
    const phases = new PhaseTimings();
    const open = (which: SideName) =>
      options.isolate
        ? openSideProcess(scenario, which, context, phases, { built: options.built, progress })
        : scenario.openSide(context, which, phases);
    const agboss = counted(await open("agboss"), trace?.agboss);
    let langgraph: OpenedSide;
    try {
      langgraph = counted(await open("langgraph"), trace?.langgraph);
    } catch (error) {
      await agboss.side.close();
      throw error;
    }
    const files = pairBackend(context, scenario.appName).sqlKeys;
    const sql =
      sqlTimings === undefined || files === undefined
        ? undefined
        : { agboss: sqlTimings(files.agboss), langgraph: sqlTimings(files.langgraph) };
    const afterWarmup = () => {
      for (const t of [trace?.agboss, trace?.langgraph, sql?.agboss, sql?.langgraph, phases]) t?.reset();
    };
    try {
      const pair = await measurePair([agboss.side, langgraph.side], {
        ...options,
        progress,
        afterWarmup,
      });
      const measured = options.rounds * options.iterations;
      // Read before the profiled series, whose executions add to them.
      const measuredPhases = phases.summaries();
      const profiled =
        options.profile === undefined
          ? undefined
          : await profilePair(
              scenario,
              options.backend,
              options.profile,
              [agboss.side, langgraph.side],
              pair,
            ).then(
              (profile) => ({ profile, note: undefined }),
              // The measured figures stand without it.
              (error: unknown) => ({
                profile: undefined,
                note: `profile: failed, ${error instanceof Error ? error.message : String(error)}`,
              }),
            );
      // On fresh files, after the measured and profiled series: nothing of it is in their figures.
      const walPages =
        options.traceStore && options.backend === "sqlite"
          ? await walPagesOfPair(scenario, context).catch((error: unknown) => ({
              error: error instanceof Error ? error.message : String(error),
            }))
          : undefined;
      const rows = (calls: CallTimings | undefined, statements: CallTimings | undefined) => [
        ...(calls?.perExecution(measured) ?? []),
        ...(statements?.perExecution(measured) ?? []),
      ];
      return {
        scenario,
        agboss: pair.first,
        langgraph: pair.second,
        ratio: pair.ratio,
        ratioByRound: pair.ratioByRound,
        notes: [
          ...(scenario.notes ?? []),
          `agboss: ${await agboss.describe()}`,
          `langgraph: ${await langgraph.describe()}`,
          ...(profiled?.note === undefined ? [] : [profiled.note]),
          ...(walPages !== undefined && "error" in walPages
            ? [`pages written: not counted, ${walPages.error}`]
            : []),
        ],
        phases: measuredPhases,
        breakdown:
          trace === undefined
            ? undefined
            : { agboss: rows(trace.agboss, sql?.agboss), langgraph: rows(trace.langgraph, sql?.langgraph) },
        profile: profiled?.profile,
        walPages,
      };
    } finally {
      await Promise.allSettled([agboss.side.close(), langgraph.side.close()]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (target !== undefined) await server?.drop(target);
  }
}

/** With `--trace-store`, a side whose executions count the LangChain runnables they start into `timings`. */
function counted(opened: OpenedSide, timings: CallTimings | undefined): OpenedSide {
  if (timings === undefined) return opened;
  const { side } = opened;
  return {
    ...opened,
    side: { ...side, runOnce: (iteration) => countRunnables(timings, () => side.runOnce(iteration)) },
  };
}

/** Profiles each side of a pair alone, AGBoss first, on threads the warm-up and the rounds left unused. */
async function profilePair(
  scenario: PairScenario,
  backend: Backend,
  profile: { readonly dir: string; readonly executions: number },
  [agboss, langgraph]: readonly [BenchSide, BenchSide],
  measured: PairResult,
): Promise<{ agboss: SideProfile; langgraph: SideProfile }> {
  const one = async (side: BenchSide, first: number) => {
    progress(`  profiling ${side.label}: ${profile.executions} executions alone`);
    const file = join(profile.dir, `${scenario.id}-${backend}-${side.label}.cpuprofile`);
    return profileSide(side, first, profile.executions, file);
  };
  const [agbossFirst, langgraphFirst] = measured.nextIteration;
  return { agboss: await one(agboss, agbossFirst), langgraph: await one(langgraph, langgraphFirst) };
}

/** The profile's parts side by side: those over 0.01 ms on either side, then the rest in one row. */
function printProfile(profile: { readonly agboss: SideProfile; readonly langgraph: SideProfile }): void {
  const { agboss, langgraph } = profile;
  const msOf = (side: SideProfile) => {
    const byPart = new Map(side.parts.map((p) => [p.part, p.ms]));
    return (part: string) => byPart.get(part) ?? 0;
  };
  const [a, l] = [msOf(agboss), msOf(langgraph)];
  const shown = [...new Set([...agboss.parts, ...langgraph.parts].map((p) => p.part))]
    .filter((name) => Math.max(a(name), l(name)) >= 0.01)
    .sort((x, y) => a(y) + l(y) - (a(x) + l(x)));
  const rest = (side: SideProfile) =>
    side.parts.filter((p) => !shown.includes(p.part)).reduce((sum, p) => sum + p.ms, 0);
  const cell = (value: number) => value.toFixed(3);
  console.log(
    `  profile, each side alone (${agboss.executions} executions, its main thread sampled every ${PROFILE_INTERVAL_US} µs; self time per execution, ms):`,
  );
  const table = markdownTable(
    ["part", "AGBoss", "LangGraph"],
    [
      ...shown.map((name) => [name, cell(a(name)), cell(l(name))]),
      ["everything else", cell(rest(agboss)), cell(rest(langgraph))],
      ["sampled in all", cell(agboss.sampledMs), cell(langgraph.sampledMs)],
      ["wall time of the profiled series", cell(agboss.wallMs), cell(langgraph.wallMs)],
    ],
  );
  for (const line of table) console.log(`    ${line}`);
  console.log(`    profiles: ${agboss.file}, ${langgraph.file}`);
}

const ms = (value: number) => `${value.toFixed(2)} ms`;

/** A markdown table: the first column left-aligned, the others right-aligned. */
function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join(" | ")} |`;
  return [
    line(header),
    `|${widths.map((w, i) => (i === 0 ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|`,
    ...rows.map(line),
  ];
}

/** For scenarios that time parts of an execution: each part's p50/p99 per side, and LangGraph p50 ÷ AGBoss p50. */
function printPhases(results: readonly ScenarioResult[]): void {
  const rows: string[][] = [];
  for (const r of results) {
    const parts = [...new Set(r.phases.map((p) => p.phase))];
    for (const part of parts) {
      const agboss = r.phases.find((p) => p.side === "agboss" && p.phase === part);
      const langgraph = r.phases.find((p) => p.side === "langgraph" && p.phase === part);
      if (agboss === undefined || langgraph === undefined) continue;
      rows.push([
        `${r.scenario.title}: ${part}`,
        ms(agboss.p50Ms),
        ms(agboss.p99Ms),
        ms(langgraph.p50Ms),
        ms(langgraph.p99Ms),
        `${(langgraph.p50Ms / agboss.p50Ms).toFixed(2)}x`,
      ]);
    }
  }
  if (rows.length === 0) return;
  console.log("");
  const header = ["part", "AGBoss p50", "AGBoss p99", "LangGraph p50", "LangGraph p99", "p50 ratio"];
  for (const line of markdownTable(header, rows)) console.log(line);
  console.log(
    "  p50 ratio = LangGraph p50 ÷ AGBoss p50 (like the table's ratio: 1.0x is parity, lower is slower)",
  );
}

function printTable(results: readonly ScenarioResult[], options: BenchOptions): void {
  if (results.length === 0) return;
  const header = [
    "scenario",
    "AGBoss exec/s",
    "LangGraph exec/s",
    "ratio",
    "AGBoss p50",
    "AGBoss p99",
    "LangGraph p50",
    "LangGraph p99",
  ];
  const rows = results.map((r) => [
    r.scenario.title,
    r.agboss.execPerSec.toFixed(1),
    r.langgraph.execPerSec.toFixed(1),
    `${r.ratio.toFixed(2)}x`,
    ms(r.agboss.p50Ms),
    ms(r.agboss.p99Ms),
    ms(r.langgraph.p50Ms),
    ms(r.langgraph.p99Ms),
  ]);
  console.log("");
  for (const line of markdownTable(header, rows)) console.log(line);
  printPhases(results);
  console.log("");
  for (const r of results) {
    const target = targetOf(r.scenario.id, options);
    const verdict =
      target === undefined
        ? "(no target is set for it here)"
        : `${r.ratio >= target ? "meets" : "is BELOW"} its ${target.toFixed(1)}x target.`;
    console.log(`${r.scenario.title}: ratio ${r.ratio.toFixed(2)}x ${verdict}`);
    const rounds = (s: SideSummary) => s.execPerSecByRound.map((v) => v.toFixed(1)).join(", ");
    console.log(`  exec/s by round: AGBoss ${rounds(r.agboss)}; LangGraph ${rounds(r.langgraph)}`);
    console.log(
      `  ratio by round: ${r.ratioByRound.map((v) => v.toFixed(2)).join(", ")} (the table shows their median)`,
    );
    for (const note of r.notes) console.log(`  ${note}`);
    if (r.breakdown !== undefined) {
      for (const [label, rows, summary] of [
        ["AGBoss", r.breakdown.agboss, r.agboss],
        ["LangGraph", r.breakdown.langgraph, r.langgraph],
      ] as const) {
        console.log(`  ${label}: per execution (mean ${ms(summary.meanMs)}), calls and wall time`);
        for (const row of rows.filter((x) => x.ms >= 0.005)) {
          console.log(
            `    ${row.name.padEnd(34)} ${row.calls.toFixed(1).padStart(6)} × ${ms(row.ms).padStart(10)}`,
          );
        }
      }
    }
    if (r.walPages !== undefined && !("error" in r.walPages)) printWalPages(r.walPages);
    if (r.profile !== undefined) printProfile(r.profile);
  }
}

/** How many of each side's written pages a table or index must have to be named on its own. */
const NAMED_TREE_PAGES = 0.5;

function printWalPages(pages: { readonly agboss: WalPages; readonly langgraph: WalPages }): void {
  const { executions } = pages.agboss;
  console.log(
    `  pages written per execution (the SQLite write-ahead log of ${executions} executions per side, after ${pages.agboss.warmup} on fresh files, checkpoints inline):`,
  );
  for (const [label, side] of [
    ["AGBoss", pages.agboss],
    ["LangGraph", pages.langgraph],
  ] as const) {
    const named = side.byTree.filter((t) => t.pages >= NAMED_TREE_PAGES);
    const rest = side.byTree.length - named.length;
    const trees = named.map((t) => `${t.tree} ${t.pages.toFixed(1)}`).join(", ");
    console.log(
      `    ${label}: ${side.pages.toFixed(1)} pages in ${side.commits.toFixed(1)} commits; ${trees}${rest > 0 ? `, ${rest} more below ${NAMED_TREE_PAGES}` : ""}`,
    );
    if (side.byCommit === undefined) {
      console.log(`      by commit: not shown (the executions made different numbers of commits)`);
      continue;
    }
    side.byCommit.forEach((commit, place) => {
      const most = commit.byTree.slice(0, COMMIT_TREES);
      const others = commit.byTree.length - most.length;
      const named = most.map((t) => `${t.tree} ${t.pages.toFixed(1)}`).join(", ");
      console.log(
        `      commit ${place + 1}: ${commit.pages.toFixed(1)} pages (${named}${others > 0 ? `, ${others} more` : ""})`,
      );
    });
  }
}

/** How many tables and indexes each commit's line names, most pages first. */
const COMMIT_TREES = 4;

/** The run's settings, at the head of every `BENCH_RESULT` line. */
function runJson(options: BenchOptions) {
  return {
    node: process.version,
    iterations: options.iterations,
    warmup: options.warmup,
    rounds: options.rounds,
    chunk: options.chunk,
    backend: options.backend,
    synchronous: options.synchronous,
    ...(options.backend === "sqlite" ? { walCheckpoints: options.walCheckpoints } : {}),
    isolate: options.isolate,
    built: options.built,
    ...(options.postgresUrl === undefined ? {} : { postgres: describeUrl(options.postgresUrl) }),
  };
}

/** One scenario's `BENCH_RESULT` JSON: the run's settings and `scenarios` holding that scenario alone. */
function resultJson(result: ScenarioResult | SoloScenarioResult, options: BenchOptions): string {
  if ("result" in result) {
    const settings =
      result.scenario.id === recoveryScenario.id
        ? { recover: options.recover, resumes: options.recoveryResumes }
        : result.scenario.id === pendingHeapScenario.id
          ? { heapPauses: options.heapPauses }
          : { resumes: options.resumes, pendingLevels: options.pendingLevels };
    return JSON.stringify({
      ...runJson(options),
      ...settings,
      scenarios: [
        { id: result.scenario.id, title: result.scenario.title, kind: "solo", ...result.result.figures },
      ],
    });
  }
  return pairJson(result, options);
}

function pairJson(r: ScenarioResult, options: BenchOptions): string {
  const side = (s: SideSummary) => ({
    execPerSec: round(s.execPerSec),
    execPerSecByRound: s.execPerSecByRound.map(round),
    p50Ms: round(s.p50Ms),
    p99Ms: round(s.p99Ms),
    meanMs: round(s.meanMs),
    executions: s.executions,
  });
  return JSON.stringify({
    ...runJson(options),
    scenarios: [
      {
        id: r.scenario.id,
        title: r.scenario.title,
        kind: "pair",
        agboss: side(r.agboss),
        langgraph: side(r.langgraph),
        ratio: round(r.ratio),
        ratioByRound: r.ratioByRound.map(round),
        target: targetOf(r.scenario.id, options) ?? null,
        ...(r.walPages === undefined
          ? {}
          : {
              walPages:
                "error" in r.walPages
                  ? r.walPages
                  : {
                      walCheckpoints: "inline",
                      agboss: walPagesJson(r.walPages.agboss),
                      langgraph: walPagesJson(r.walPages.langgraph),
                    },
            }),
        ...(r.profile === undefined
          ? {}
          : {
              profile: { agboss: profileJson(r.profile.agboss), langgraph: profileJson(r.profile.langgraph) },
            }),
        ...(r.phases.length === 0
          ? {}
          : {
              phases: r.phases.map((p) => ({
                side: p.side,
                phase: p.phase,
                p50Ms: round(p.p50Ms),
                p99Ms: round(p.p99Ms),
                meanMs: round(p.meanMs),
                count: p.count,
              })),
            }),
      },
    ],
  });
}

/** A side's page count in `BENCH_RESULT`: per execution, every table and index it wrote to. */
function walPagesJson(pages: WalPages) {
  return {
    warmup: pages.warmup,
    executions: pages.executions,
    pages: round(pages.pages),
    commits: round(pages.commits),
    byTree: Object.fromEntries(pages.byTree.map((t) => [t.tree, round(t.pages)])),
    ...(pages.byCommit === undefined
      ? {}
      : {
          byCommit: pages.byCommit.map((commit) => ({
            pages: round(commit.pages),
            byTree: Object.fromEntries(commit.byTree.map((t) => [t.tree, round(t.pages)])),
          })),
        }),
  };
}

/** A side's profile in `BENCH_RESULT`: its totals and every part of at least 1 µs per execution. */
function profileJson(profile: SideProfile) {
  return {
    executions: profile.executions,
    intervalUs: PROFILE_INTERVAL_US,
    file: profile.file,
    wallMs: round(profile.wallMs),
    sampledMs: round(profile.sampledMs),
    partsMs: Object.fromEntries(profile.parts.filter((p) => p.ms >= 0.001).map((p) => [p.part, round(p.ms)])),
  };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

async function main(): Promise<void> {
  let options: BenchOptions | undefined;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (options === undefined) {
    console.log(USAGE);
    return;
  }
  let server: PostgresServer | undefined;
  if (options.postgresUrl !== undefined) {
    try {
      server = await PostgresServer.connect(options.postgresUrl);
    } catch (error) {
      if (!(error instanceof PostgresUnavailableError)) throw error;
      console.error(`AGBoss bench (postgres): ${error.message}`);
      process.exitCode = 1;
      return;
    }
  }
  const settings =
    server === undefined
      ? `${options.backend}, synchronous ${options.synchronous}${options.backend === "sqlite" ? `, AGBoss's WAL checkpoints ${options.walCheckpoints}` : ""}`
      : `postgres at ${describeUrl(server.url)}: ${server.facts}`;
  progress(
    `AGBoss bench (${settings}): ${options.rounds} rounds × ${options.iterations} executions per side in turns of ${options.chunk}, ${options.warmup} warm-up, node ${process.version}${options.isolate ? `; each side of a pair in a process of its own, AGBoss ${options.built ? "as built (dist)" : "from its sources"}` : ""}`,
  );
  for (const s of options.skipped) progress(`  (${s.id} runs on ${s.backends.join(" and ")} only: left out)`);
  for (const s of SCENARIOS.filter((x) => x.onlyWhenNamed === true && !options.scenarios.includes(x))) {
    progress(`  (${s.id} runs only when named: --scenario ${s.id})`);
  }
  const sqlTimings = !options.traceStore
    ? undefined
    : options.backend === "sqlite"
      ? traceSqlite()
      : options.backend === "postgres"
        ? tracePostgres()
        : undefined;
  // Ctrl-C (or a `kill`) must not leave the run's schemas behind.
  const onInterrupt = (signal: NodeJS.Signals) => {
    void (server?.close() ?? Promise.resolve()).finally(() => process.exit(signal === "SIGTERM" ? 143 : 130));
  };
  if (server !== undefined) {
    process.once("SIGINT", onInterrupt);
    process.once("SIGTERM", onInterrupt);
  }
  const results: (ScenarioResult | SoloScenarioResult)[] = [];
  try {
    for (const scenario of options.scenarios) {
      results.push(
        scenario.kind === "pair"
          ? await runScenario(scenario, options, sqlTimings, server)
          : await runSoloScenario(scenario, options, sqlTimings, server),
      );
    }
  } finally {
    process.off("SIGINT", onInterrupt);
    process.off("SIGTERM", onInterrupt);
    await server?.close();
  }
  printTable(
    results.filter((r): r is ScenarioResult => !("result" in r)),
    options,
  );
  for (const r of results) {
    if (!("result" in r)) continue;
    console.log("");
    for (const line of r.result.lines) console.log(line);
  }
  console.log("");
  for (const r of results) console.log(`BENCH_RESULT ${resultJson(r, options)}`);
  const failures = results.flatMap((r) => ("result" in r ? (r.result.failures ?? []) : []));
  if (failures.length > 0) {
    console.error(`\nFAILED CHECKS:\n${failures.map((f) => `  ${f}`).join("\n")}`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
});
