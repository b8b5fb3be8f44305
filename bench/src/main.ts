import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { measurePair, type SideSummary } from "./measure.js";
import { oneToolAgentScenario } from "./scenarios/one-tool-agent.js";
import type { Backend, Scenario, Synchronous } from "./scenarios/scenario.js";
import { CallTimings, traceSqlite } from "./store-timing.js";

/** Every scenario, in the order they run. Later ones (pause/resume, resume latency) join this list. */
const SCENARIOS: readonly Scenario[] = [oneToolAgentScenario];

/** AGBoss should reach at least this fraction of raw LangGraph's executions per second. */
const TARGET_RATIO = 0.5;

const USAGE = `Usage: pnpm --filter @agboss/bench bench [-- options]

  --iterations N   measured executions per side per round (default 200)
  --warmup N       executions per side before measuring (default 100)
  --rounds N       rounds; medians over rounds are reported (default 3)
  --chunk N        executions a side runs before the other takes its turn within a round (default 10)
  --backend B      sqlite (default: a SQLite file per side) or memory (in-memory store vs MemorySaver)
  --synchronous S  default (each library's own: AGBoss FULL, SqliteSaver NORMAL), normal or full on both
  --trace-store    also time every store/checkpointer call and SQL statement per side (slows both a little)
  --scenario ID    run only this scenario (repeatable); one of: ${SCENARIOS.map((s) => s.id).join(", ")}
  --help           print this`;

interface BenchOptions {
  readonly iterations: number;
  readonly warmup: number;
  readonly rounds: number;
  readonly chunk: number;
  readonly backend: Backend;
  readonly synchronous: Synchronous;
  readonly traceStore: boolean;
  readonly scenarios: readonly Scenario[];
}

function positiveInteger(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`--${name} must be an integer ≥ ${min}, got "${raw}"`);
  return value;
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
      synchronous: { type: "string" },
      scenario: { type: "string", multiple: true },
      "trace-store": { type: "boolean" },
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
  if (backend !== "sqlite" && backend !== "memory")
    throw new Error(`--backend must be sqlite or memory, got "${backend}"`);
  const synchronous = (values.synchronous ?? "default").toUpperCase();
  if (synchronous !== "DEFAULT" && synchronous !== "NORMAL" && synchronous !== "FULL") {
    throw new Error(`--synchronous must be default, normal or full, got "${values.synchronous}"`);
  }
  return {
    backend,
    traceStore: values["trace-store"] === true,
    synchronous: synchronous === "DEFAULT" ? "default" : synchronous,
    iterations: positiveInteger("iterations", values.iterations, 200, 1),
    warmup: positiveInteger("warmup", values.warmup, 100, 0),
    rounds: positiveInteger("rounds", values.rounds, 3, 1),
    chunk: positiveInteger("chunk", values.chunk, 10, 1),
    scenarios: wanted.length === 0 ? SCENARIOS : SCENARIOS.filter((s) => wanted.includes(s.id)),
  };
}

interface ScenarioResult {
  readonly scenario: Scenario;
  /** With `--trace-store`: per side, what each store call and SQL verb costs per execution. */
  readonly breakdown?: { readonly agboss: TimingRow[]; readonly langgraph: TimingRow[] } | undefined;
  readonly agboss: SideSummary;
  readonly langgraph: SideSummary;
  /** The median of the per-round ratios (each round interleaves both sides). */
  readonly ratio: number;
  readonly ratioByRound: readonly number[];
  readonly notes: readonly string[];
}

const progress = (line: string) => console.log(line);

type TimingRow = { name: string; calls: number; ms: number };

async function runScenario(
  scenario: Scenario,
  options: BenchOptions,
  sqlTimings: ((file: string) => CallTimings) | undefined,
): Promise<ScenarioResult> {
  const dir = mkdtempSync(join(tmpdir(), `agboss-bench-${scenario.id}-`));
  progress(`▶ ${scenario.title}: ${scenario.description}`);
  const trace = options.traceStore ? { agboss: new CallTimings(), langgraph: new CallTimings() } : undefined;
  try {
    const opened = await scenario.open({
      dir,
      backend: options.backend,
      synchronous: options.synchronous,
      progress,
      trace,
    });
    const files = opened.files;
    const sql =
      sqlTimings === undefined || files === undefined
        ? undefined
        : { agboss: sqlTimings(files.agboss), langgraph: sqlTimings(files.langgraph) };
    const afterWarmup = () => {
      for (const t of [trace?.agboss, trace?.langgraph, sql?.agboss, sql?.langgraph]) t?.reset();
    };
    try {
      const pair = await measurePair([opened.agboss, opened.langgraph], {
        ...options,
        progress,
        afterWarmup,
      });
      const measured = options.rounds * options.iterations;
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
        notes: opened.notes(),
        breakdown:
          trace === undefined
            ? undefined
            : { agboss: rows(trace.agboss, sql?.agboss), langgraph: rows(trace.langgraph, sql?.langgraph) },
      };
    } finally {
      await Promise.allSettled([opened.agboss.close(), opened.langgraph.close()]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ms = (value: number) => `${value.toFixed(2)} ms`;

function printTable(results: readonly ScenarioResult[]): void {
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
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join(" | ")} |`;
  console.log("");
  console.log(line(header));
  console.log(
    `|${widths.map((w, i) => (i === 0 ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|`,
  );
  for (const row of rows) console.log(line(row));
  console.log("");
  for (const r of results) {
    const verdict = r.ratio >= TARGET_RATIO ? "meets" : "is BELOW";
    console.log(`${r.scenario.title}: ratio ${r.ratio.toFixed(2)}x ${verdict} the ${TARGET_RATIO}x target.`);
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
  }
}

function resultJson(results: readonly ScenarioResult[], options: BenchOptions): string {
  const side = (s: SideSummary) => ({
    execPerSec: round(s.execPerSec),
    execPerSecByRound: s.execPerSecByRound.map(round),
    p50Ms: round(s.p50Ms),
    p99Ms: round(s.p99Ms),
    meanMs: round(s.meanMs),
    executions: s.executions,
  });
  return JSON.stringify({
    node: process.version,
    iterations: options.iterations,
    warmup: options.warmup,
    rounds: options.rounds,
    chunk: options.chunk,
    backend: options.backend,
    synchronous: options.synchronous,
    targetRatio: TARGET_RATIO,
    scenarios: results.map((r) => ({
      id: r.scenario.id,
      title: r.scenario.title,
      agboss: side(r.agboss),
      langgraph: side(r.langgraph),
      ratio: round(r.ratio),
      ratioByRound: r.ratioByRound.map(round),
    })),
  });
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
  progress(
    `AGBoss bench (${options.backend}, synchronous ${options.synchronous}): ${options.rounds} rounds × ${options.iterations} executions per side in turns of ${options.chunk}, ${options.warmup} warm-up, node ${process.version}`,
  );
  const sqlTimings = options.traceStore && options.backend === "sqlite" ? traceSqlite() : undefined;
  const results: ScenarioResult[] = [];
  for (const scenario of options.scenarios) results.push(await runScenario(scenario, options, sqlTimings));
  printTable(results);
  console.log(`BENCH_RESULT ${resultJson(results, options)}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
});
