import { createRequire } from "node:module";
import { join } from "node:path";
import { PerformanceObserver, performance } from "node:perf_hooks";
import { type App, createApp, ExecutionStatus, PauseStatus, type StoreFactory } from "@agboss/core";
import { postgresStore } from "@agboss/store-postgres";
import { type SqliteHandle, SqliteStore, sqliteStore } from "@agboss/store-sqlite";
import { tool } from "@langchain/core/tools";
import { type BaseCheckpointSaver, interrupt } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { z } from "zod";
import {
  ApprovalApplication,
  decisionSchema,
  MANAGER,
  ManagerInbox,
  REFUND_ANSWER,
  REFUND_ARGS,
  REFUND_PROMPT,
  REFUND_REQUEST,
  REFUND_TOOL_DESCRIPTION,
  REFUND_TOOL_NAME,
  RefundStart,
  refund,
  refundInput,
  refundRuns,
} from "../approval-app.js";
import { type PhaseSummary, summarizeLatencies } from "../measure.js";
import type { PostgresServer } from "../postgres.js";
import {
  type CopyTarget,
  postgresTarget,
  type SqliteHandleLike,
  sqliteTarget,
  TreeTemplate,
} from "../tree-copies.js";
import { TwoTurnLangChainModel } from "../two-turn-langchain-model.js";
import type { ScenarioContext, SoloResult, SoloScenario } from "./scenario.js";

// How long a pause and a resume take while many other pauses wait in the same store, what the recovery
// sweep costs the event loop over that backlog, and how many bytes each waiting pause takes in the
// database. Each level's store is filled with copies of a real paused tree (every row of it, checkpoints
// included, written in bulk SQL); an executor app makes fresh pauses (timed: execute until paused) and a
// second app on its own connection, with nothing of those executions in memory, answers them (timed:
// resume until the agent's answer). The levels take turns, so each is timed under the same machine load.

/** Every tree is on this tenant: an index that narrows only by tenant reads the whole backlog. */
const TENANT = "acme";
/** Fresh pauses kept waiting ahead of the one resumed, so a resume never answers the pause made just before. */
const LAG = 10;
/** Untimed round trips per store before measuring (JIT, statement caches, pages). */
const WARMUP = 30;
/** Round trips a store does before the other stores take their turn. */
const CHUNK = 10;
/** Copies of the tree written per statement (per table). */
const BATCH = 25_000;
/** Copies of the raw LangGraph side's paused thread whose bytes are counted. */
const LANGGRAPH_COPIES = 10_000;
/** The share of the backlog recorded as running before the sweep is timed (1 in this many). */
const RUNNING_SHARE = 10; // copies whose number ends in 0
/** The longest event-loop block the sweep may cause (ms). */
const BLOCK_TARGET_MS = 5;
/** The most p50 and p99 may grow from the empty store to the fullest and still meet the target. */
const FLAT_RATIO = 1.1;

/** The better-sqlite3 constructor the store itself loads (the bench does not need its type package). */
const openDatabase = (path: string) => {
  const Database = createRequire(import.meta.url)("better-sqlite3") as new (file: string) => SqliteHandle;
  return new Database(path);
};

interface Bytes {
  /** Bytes per copy of the tree, in total and by table. */
  readonly perPause: number;
  readonly byTable: Record<string, number>;
}

interface SweepFigures {
  readonly ms: number;
  readonly maxBlockMs: number;
  /**
   * The longest block counting only the time the process itself ran in it (its CPU time over the gap,
   * when less than the gap): a gap the process spent waiting for a core (the database server, a
   * vacuum) is the machine's, not the sweep's.
   */
  readonly maxBusyBlockMs: number;
  /** How many times the event loop was held longer than {@link BLOCK_TARGET_MS} by the process itself. */
  readonly blocksOver: number;
  /** The longest garbage collection during the sweep. */
  readonly longestGcMs: number;
  readonly running: number;
}

/** One store filled to one level, with the app that fills it and the app that resumes. */
interface LevelStore {
  readonly level: number;
  readonly path: string | undefined;
  readonly database: SqliteHandle | undefined;
  readonly schema: string | undefined;
  readonly target: CopyTarget;
  readonly executor: App;
  readonly resumer: App;
  readonly inbox: ManagerInbox;
  /** Fresh pauses made and not yet resumed, oldest first. */
  readonly queue: string[];
  readonly pauses: number[];
  readonly resumes: number[];
  made: number;
  seedSeconds: number;
  bytes: Bytes | undefined;
  sweep: SweepFigures | undefined;
}

async function openLevelStore(
  context: ScenarioContext,
  level: number,
  synchronous: string,
): Promise<LevelStore> {
  let path: string | undefined;
  let database: SqliteHandle | undefined;
  let schema: string | undefined;
  let target: CopyTarget;
  let executorStore: StoreFactory | SqliteStore;
  let resumerStore: StoreFactory;
  if (context.backend === "postgres") {
    const server = serverOf(context);
    schema = await server.freshSchema("resume_latency", `pending_${level}`);
    target = postgresTarget(server, schema);
    executorStore = postgresStore({ connectionString: server.url, schema });
    resumerStore = postgresStore({ connectionString: server.url, schema });
  } else {
    path = join(context.dir, `pending-${level}.sqlite`);
    // The executor's connection is ours, so the seed can run with synchronous=OFF and then go back.
    database = openDatabase(path);
    target = sqliteTarget(database as unknown as SqliteHandleLike);
    const mode = synchronous as "FULL" | "NORMAL";
    executorStore = await SqliteStore.open({ database, synchronous: mode });
    resumerStore = sqliteStore({ path, synchronous: mode });
  }
  const executor = await createApp(ApprovalApplication, { store: executorStore });
  const resumer = await createApp(ApprovalApplication, { store: resumerStore });
  return {
    level,
    path,
    database,
    schema,
    target,
    executor,
    resumer,
    inbox: executor.get(ManagerInbox),
    queue: [],
    pauses: [],
    resumes: [],
    made: 0,
    seedSeconds: 0,
    bytes: undefined,
    sweep: undefined,
  };
}

function serverOf(context: ScenarioContext): PostgresServer {
  const server = context.postgresServer;
  if (server === undefined) throw new Error("--backend postgres needs a server (the runner opens one)");
  return server;
}

async function closeLevelStore(s: LevelStore): Promise<void> {
  await s.resumer.close();
  await s.executor.close();
  s.database?.close();
}

const sum = (values: Record<string, number>) => Object.values(values).reduce((a, b) => a + b, 0);

/** Per copy: what the tables grew by between `before` and `after`, `copies` copies apart. */
function perCopy(before: Record<string, number>, after: Record<string, number>, copies: number): Bytes {
  const byTable: Record<string, number> = {};
  for (const [table, bytes] of Object.entries(after))
    byTable[table] = (bytes - (before[table] ?? 0)) / copies;
  return { perPause: sum(byTable), byTable };
}

/**
 * Fills `s` to its level: one real execution rests paused (thread, execution record, lease, pause,
 * checkpoints, blobs and writes exactly as the application leaves them), then `level - 1` copies of
 * all its rows are written in bulk SQL, {@link BATCH} at a time (SQLite: with synchronous=OFF).
 */
async function seed(
  s: LevelStore,
  context: ScenarioContext,
  synchronous: string,
  progress: (line: string) => void,
): Promise<void> {
  if (s.level === 0) return;
  const began = performance.now();
  const threadId = "seed-template";
  const paused = await s.executor.execute(
    RefundStart,
    { text: REFUND_REQUEST },
    { threadId, ownerId: "customer-1", tenant: { tenantId: TENANT } },
  );
  if (paused.status !== ExecutionStatus.Paused)
    throw new Error(`${threadId} did not pause: ${paused.status}`);
  s.inbox.take(`${TENANT}/${threadId}`);
  const t = (name: string) => s.target.table(name);
  const executions = await s.target.rows<{ execution_id: string }>(
    `select execution_id from ${t("agboss_executions")} where root_execution_id = '${paused.executionId}'`,
  );
  const pauses = await s.target.rows<{ pause_id: string }>(
    `select pause_id from ${t("agboss_pauses")} where root_execution_id = '${paused.executionId}'`,
  );
  const ids = [threadId, ...executions.map((e) => e.execution_id), ...pauses.map((p) => p.pause_id)];
  const template = await TreeTemplate.take(s.target, ids, (name) => name.startsWith("agboss_migration"));
  const before = await s.target.bytesByTable();
  s.database?.pragma("synchronous = OFF");
  const label = s.level.toLocaleString("en-US");
  for (let from = 1; from < s.level; from += BATCH) {
    const to = Math.min(s.level, from + BATCH);
    await template.copy(from, to);
    if (Math.floor(to / (s.level / 5)) > Math.floor(from / (s.level / 5)) && to < s.level)
      progress(
        `  store ${label}: ${to.toLocaleString("en-US")} pending pauses (${((performance.now() - began) / 1000).toFixed(1)} s)`,
      );
  }
  s.database?.pragma(`synchronous = ${synchronous}`);
  if (context.backend === "postgres") await s.target.exec(`analyze`);
  s.seedSeconds = (performance.now() - began) / 1000;
  if (s.level > 1) s.bytes = perCopy(before, await s.target.bytesByTable(), s.level - 1);
  progress(
    `  store ${label}: ${label} pending pauses in ${s.seedSeconds.toFixed(1)} s (1 execution + ${(s.level - 1).toLocaleString("en-US")} copies of its rows in ${template.tableNames.length} tables)`,
  );
}

/** Executes until the channel pauses (timed when `timed`); returns the pauseId. */
async function freshPause(s: LevelStore, timed: boolean): Promise<string> {
  const threadId = `fresh-${s.made++}`;
  const t0 = performance.now();
  const paused = await s.executor.execute(
    RefundStart,
    { text: REFUND_REQUEST },
    { threadId, ownerId: "customer-1", tenant: { tenantId: TENANT } },
  );
  const elapsed = performance.now() - t0;
  if (paused.status !== ExecutionStatus.Paused)
    throw new Error(`${threadId} did not pause: ${paused.status}`);
  if (timed) s.pauses.push(elapsed);
  return s.inbox.take(`${TENANT}/${threadId}`);
}

/** Answers `pauseId` from the other app (timed when `timed`) and checks that the tool ran and the agent answered. */
async function resumeChecked(s: LevelStore, pauseId: string, timed: boolean): Promise<void> {
  const before = refundRuns.agboss;
  const t0 = performance.now();
  const done = await s.resumer.resume(
    { pauseId, decision: { approved: true } },
    { tenantId: TENANT, answeredBy: MANAGER },
  );
  const elapsed = performance.now() - t0;
  const text = (done.output as { text?: unknown } | undefined)?.text;
  if (
    done.status !== ExecutionStatus.Completed ||
    text !== REFUND_ANSWER ||
    refundRuns.agboss !== before + 1
  ) {
    throw new Error(`resume of ${pauseId} ended ${done.status} with ${JSON.stringify(done.output)}`);
  }
  if (timed) s.resumes.push(elapsed);
}

async function cycle(s: LevelStore, timed: boolean): Promise<void> {
  s.queue.push(await freshPause(s, timed));
  await resumeChecked(s, s.queue.shift() as string, timed);
}

/** Round trips on every store in turns of {@link CHUNK} (the order flips each turn). */
async function measure(stores: readonly LevelStore[], samples: number, progress: (line: string) => void) {
  for (const s of stores) {
    for (let i = 0; i < LAG; i += 1) s.queue.push(await freshPause(s, false));
    for (let i = 0; i < WARMUP; i += 1) await cycle(s, false);
  }
  let turn = 0;
  let reported = 0;
  for (let done = 0; done < samples; done += CHUNK) {
    const count = Math.min(CHUNK, samples - done);
    const order = turn++ % 2 === 0 ? stores : [...stores].reverse();
    for (const s of order) for (let i = 0; i < count; i += 1) await cycle(s, true);
    if ((done + count) * 4 >= (reported + 1) * samples && done + count < samples) {
      reported = Math.floor(((done + count) * 4) / samples);
      progress(`  ${done + count}/${samples} pauses and resumes per store`);
    }
  }
  // Leave exactly `level` waiting.
  for (const s of stores) while (s.queue.length > 0) await resumeChecked(s, s.queue.shift() as string, false);
}

/**
 * One round of the recovery sweep over the backlog, with a tenth of it recorded as running (updated in
 * the future, so the sweep pages through them without recovering any): how long it took and the longest
 * the event loop waited meanwhile.
 */
async function timeSweep(s: LevelStore): Promise<SweepFigures> {
  const t = s.target.table("agboss_executions");
  const future = Date.now() + 365 * 24 * 3600_000;
  await s.target.exec(
    `update ${t} set status = 'running', updated_at = ${future} where execution_id like '%0' and status = 'paused'`,
  );
  const [running] = await s.target.rows<{ n: number | string }>(
    `select count(*) as n from ${t} where status = 'running'`,
  );
  // One untimed round first: a store's first sweep prepares each of its statements and runs code for
  // the first time (single gaps of 5–15 ms on SQLite, none in the rounds after); the sweep that runs
  // every 30 s is the steady one. The running trees are updated in the future, so the first round
  // leaves them as they were.
  await s.executor.sweepOnce(24 * 3600_000);
  // A 1 ms timer: the longest gap between its ticks, less the 1 ms it waits, is the longest the event
  // loop was held (by the sweep's synchronous work or a SQLite statement).
  // The process's CPU time over each gap (all its threads: a parallel collection counts fully).
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let longest = 0;
  let longestBusy = 0;
  let over = 0;
  const gap = (now: number) => {
    const block = now - last - 1;
    const cpu = process.cpuUsage(lastCpu);
    const busy = Math.min(block, (cpu.user + cpu.system) / 1000);
    longest = Math.max(longest, block);
    longestBusy = Math.max(longestBusy, busy);
    if (busy > BLOCK_TARGET_MS) over += 1;
    last = now;
    lastCpu = process.cpuUsage();
  };
  const probe = setInterval(() => gap(performance.now()), 1);
  // Garbage collections meanwhile: a block as long as one of them is the collector's, not the sweep's.
  let longestGc = 0;
  const gcs = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) longestGc = Math.max(longestGc, entry.duration);
  });
  gcs.observe({ entryTypes: ["gc"] });
  const t0 = performance.now();
  last = t0;
  lastCpu = process.cpuUsage();
  await s.executor.sweepOnce(24 * 3600_000);
  const ms = performance.now() - t0;
  gap(performance.now());
  clearInterval(probe);
  // The observer is told of collections asynchronously: give it a turn before it is disconnected.
  await new Promise<void>((resolve) => setImmediate(resolve));
  gcs.disconnect();
  return {
    ms,
    maxBlockMs: Math.max(0, longest),
    maxBusyBlockMs: Math.max(0, longestBusy),
    blocksOver: over,
    longestGcMs: longestGc,
    running: Number(running?.n ?? 0),
  };
}

/**
 * What one paused thread of the raw LangGraph side (the same agent, its tool calling `interrupt()`)
 * takes in its checkpointer's own database: one real pause, then {@link LANGGRAPH_COPIES} copies of its
 * rows, measured the same way as the AGBoss store.
 */
async function langgraphBytes(context: ScenarioContext, synchronous: string): Promise<Bytes> {
  let saver: BaseCheckpointSaver;
  let target: CopyTarget;
  let close: () => Promise<void>;
  if (context.backend === "postgres") {
    const server = serverOf(context);
    const schema = await server.freshSchema("resume_latency", "langgraph");
    const postgres = PostgresSaver.fromConnString(server.url, { schema });
    await postgres.setup();
    saver = postgres;
    target = postgresTarget(server, schema);
    close = () => postgres.end();
  } else {
    const sqlite = SqliteSaver.fromConnString(join(context.dir, "langgraph.sqlite"));
    sqlite.db.pragma(`synchronous = ${synchronous}`);
    saver = sqlite;
    target = sqliteTarget(sqlite.db as unknown as SqliteHandleLike);
    close = async () => {
      sqlite.db.close();
    };
  }
  try {
    const refundTool = tool(
      (input: { orderId: string; amountCents: number }) => {
        const decision = decisionSchema.parse(interrupt({ tool: REFUND_TOOL_NAME, args: input }));
        return decision.approved ? JSON.stringify(refund(input)) : "The manager declined the refund.";
      },
      { name: REFUND_TOOL_NAME, description: REFUND_TOOL_DESCRIPTION, schema: z.object(refundInput) },
    );
    const agent = createReactAgent({
      llm: new TwoTurnLangChainModel({ tool: REFUND_TOOL_NAME, args: REFUND_ARGS, answer: REFUND_ANSWER }),
      tools: [refundTool],
      prompt: REFUND_PROMPT,
      checkpointSaver: saver,
    });
    const threadId = "langgraph-template";
    const paused = await agent.invoke(
      { messages: [{ role: "user", content: REFUND_REQUEST }] },
      { configurable: { thread_id: threadId } },
    );
    if ((paused as { __interrupt__?: unknown[] }).__interrupt__?.length !== 1)
      throw new Error("the raw LangGraph thread did not pause");
    const template = await TreeTemplate.take(target, [threadId], (name) => /migrations$/.test(name));
    const before = await target.bytesByTable();
    for (let from = 1; from <= LANGGRAPH_COPIES; from += BATCH)
      await template.copy(from, Math.min(LANGGRAPH_COPIES + 1, from + BATCH));
    return perCopy(before, await target.bytesByTable(), LANGGRAPH_COPIES);
  } finally {
    await close();
  }
}

const ms = (value: number) => `${value.toFixed(2)} ms`;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

export const resumeLatencyScenario: SoloScenario = {
  kind: "solo",
  id: "resume-latency",
  title: "pause and resume latency under pending pauses",
  description:
    "execute-until-paused and app.resume (from a second app on its own connection) in stores where 0, 10,000 and 100,000 (and with --with-1m 1,000,000) copies of a real paused tree wait; the sweep's longest event-loop block; store bytes per waiting pause against raw LangGraph's.",
  backends: ["sqlite", "postgres"],
  async run(context: ScenarioContext): Promise<SoloResult> {
    const { progress } = context;
    const synchronous = context.synchronous === "default" ? "FULL" : context.synchronous;
    const stores: LevelStore[] = [];
    const results: LevelResult[] = [];
    let langgraph: Bytes | undefined;
    try {
      for (const level of context.pendingLevels) {
        const s = await openLevelStore(context, level, synchronous);
        stores.push(s);
        await seed(s, context, synchronous, progress);
      }
      progress(`  measuring ${context.resumes} pauses and resumes per store, in turns of ${CHUNK}`);
      await measure(stores, context.resumes, progress);
      for (const s of stores) {
        const [counted] = await s.target.rows<{ n: number | string }>(
          `select count(*) as n from ${s.target.table("agboss_pauses")} where status = '${PauseStatus.Pending}'`,
        );
        if (Number(counted?.n) !== s.level)
          throw new Error(`expected ${s.level} pending pauses in the store, counted ${counted?.n}`);
        s.sweep = await timeSweep(s);
        const result: LevelResult = {
          pending: s.level,
          pause: summarizeLatencies("agboss", `pause at ${s.level}`, s.pauses),
          resume: summarizeLatencies("agboss", `resume at ${s.level}`, s.resumes),
          seedSeconds: s.seedSeconds,
          bytes: s.bytes,
          sweep: s.sweep,
        };
        results.push(result);
        progress(
          `  ${s.level.toLocaleString("en-US")} pending: pause p50 ${ms(result.pause.p50Ms)} p99 ${ms(result.pause.p99Ms)}, resume p50 ${ms(result.resume.p50Ms)} p99 ${ms(result.resume.p99Ms)}, sweep ${ms(s.sweep.ms)} (longest block ${ms(s.sweep.maxBlockMs)}, of the process ${ms(s.sweep.maxBusyBlockMs)})`,
        );
      }
      progress(`  raw LangGraph: ${LANGGRAPH_COPIES.toLocaleString("en-US")} copies of one paused thread`);
      langgraph = await langgraphBytes(context, synchronous);
    } finally {
      for (const s of stores) await closeLevelStore(s);
      for (const s of stores)
        if (s.schema !== undefined) await context.postgresServer?.dropSchema(s.schema).catch(() => {});
    }
    return report(results, langgraph, {
      backend: context.backend,
      synchronous,
      samples: context.resumes,
    });
  },
};

interface LevelResult {
  readonly pending: number;
  readonly pause: PhaseSummary;
  readonly resume: PhaseSummary;
  readonly seedSeconds: number;
  readonly bytes: Bytes | undefined;
  readonly sweep: SweepFigures;
}

function report(
  results: readonly LevelResult[],
  langgraph: Bytes | undefined,
  run: { backend: string; synchronous: string; samples: number },
): SoloResult {
  const base = results[0];
  const ratio = (value: number, of: number | undefined) =>
    of === undefined || base === undefined || base.pending !== 0 ? "-" : `${(value / of).toFixed(2)}x`;
  const header = [
    "pending",
    "pause p50",
    "pause p99",
    "resume p50",
    "resume p99",
    "vs 0: pause p50/p99",
    "resume p50/p99",
    "sweep",
    "longest block / of the process (> 5 ms; longest GC)",
    "bytes/pause",
    "seed",
  ];
  const rows = results.map((r) => [
    r.pending.toLocaleString("en-US"),
    ms(r.pause.p50Ms),
    ms(r.pause.p99Ms),
    ms(r.resume.p50Ms),
    ms(r.resume.p99Ms),
    `${ratio(r.pause.p50Ms, base?.pause.p50Ms)} / ${ratio(r.pause.p99Ms, base?.pause.p99Ms)}`,
    `${ratio(r.resume.p50Ms, base?.resume.p50Ms)} / ${ratio(r.resume.p99Ms, base?.resume.p99Ms)}`,
    `${ms(r.sweep.ms)} (${r.sweep.running.toLocaleString("en-US")} running)`,
    `${ms(r.sweep.maxBlockMs)} / ${ms(r.sweep.maxBusyBlockMs)} (${r.sweep.blocksOver}; ${ms(r.sweep.longestGcMs)})`,
    r.bytes === undefined ? "-" : kb(r.bytes.perPause),
    `${r.seedSeconds.toFixed(1)} s`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c.padStart(widths[i] as number)).join(" | ")} |`;
  const lines = [
    `pause and resume latency under pending pauses (AGBoss alone, ${run.backend}${run.backend === "sqlite" ? `, synchronous=${run.synchronous}` : ""}, ${run.samples} of each per level):`,
    line(header),
    `|${widths.map((w) => `${"-".repeat(w + 1)}:`).join("|")}|`,
    ...rows.map(line),
  ];
  const last = results.at(-1);
  if (base !== undefined && last !== undefined && last !== base && base.pending === 0) {
    for (const [name, now, then] of [
      ["pause p50", last.pause.p50Ms, base.pause.p50Ms],
      ["pause p99", last.pause.p99Ms, base.pause.p99Ms],
      ["resume p50", last.resume.p50Ms, base.resume.p50Ms],
      ["resume p99", last.resume.p99Ms, base.resume.p99Ms],
    ] as const) {
      const r = now / then;
      lines.push(
        `  ${name}: ${last.pending.toLocaleString("en-US")} / 0 = ${r.toFixed(2)}x (${r <= FLAT_RATIO ? "within" : "OVER"} the ${FLAT_RATIO}x target)`,
      );
    }
  }
  for (const r of results) {
    if (r.sweep.maxBusyBlockMs > BLOCK_TARGET_MS)
      lines.push(
        `  sweep at ${r.pending.toLocaleString("en-US")}: longest event-loop block of the process ${ms(r.sweep.maxBusyBlockMs)} (OVER the ${BLOCK_TARGET_MS} ms target; ${ms(r.sweep.maxBlockMs)} with the machine's waits)`,
      );
  }
  const fullest = [...results].reverse().find((r) => r.bytes !== undefined);
  if (fullest?.bytes !== undefined && langgraph !== undefined) {
    const over = fullest.bytes.perPause - langgraph.perPause;
    lines.push(
      `  store bytes per waiting pause (from the database: ${run.backend === "sqlite" ? "dbstat" : "pg_total_relation_size"}): AGBoss ${kb(fullest.bytes.perPause)} at ${fullest.pending.toLocaleString("en-US")}, raw LangGraph ${kb(langgraph.perPause)} (${LANGGRAPH_COPIES.toLocaleString("en-US")} threads); AGBoss ${over >= 0 ? "+" : ""}${kb(over)} (${over <= 1024 ? "within" : "OVER"} the +1 KB target)`,
      `    AGBoss by table: ${breakdown(fullest.bytes)}`,
      `    LangGraph by table: ${breakdown(langgraph)}`,
    );
  }
  lines.push(
    `  every tree on one tenant; each level's store holds 1 real paused execution + copies of all its rows (checkpoints, blobs and writes included), written in bulk SQL${run.backend === "sqlite" ? " with synchronous=OFF" : ", then ANALYZE"}`,
    `  pause = execute until the channel pauses it; resume = app.resume from a second app (own connection) until the answer; levels take turns ${CHUNK} round trips at a time`,
    `  sweep = one app.sweepOnce after measuring (after one untimed round, which prepares the store's statements), with 1 in ${RUNNING_SHARE} trees recorded as running (updated in the future, so paged and left alone); longest block = the longest gap between ticks of a 1 ms timer, less 1 ms; of the process = the same counting only the process's CPU time in each gap (a gap it spent waiting for a core is the machine's); with how many gaps of the process were over 5 ms, and the longest garbage collection meanwhile`,
  );
  return {
    lines,
    figures: {
      levels: results.map((r) => ({
        pending: r.pending,
        samples: r.pause.count,
        pause: { p50Ms: round(r.pause.p50Ms), p99Ms: round(r.pause.p99Ms) },
        resume: { p50Ms: round(r.resume.p50Ms), p99Ms: round(r.resume.p99Ms) },
        sweepMs: round(r.sweep.ms),
        sweepMaxBlockMs: round(r.sweep.maxBlockMs),
        sweepMaxBusyBlockMs: round(r.sweep.maxBusyBlockMs),
        sweepBlocksOver5Ms: r.sweep.blocksOver,
        sweepLongestGcMs: round(r.sweep.longestGcMs),
        sweepRunning: r.sweep.running,
        seedSeconds: round(r.seedSeconds),
        bytesPerPause: r.bytes === undefined ? undefined : Math.round(r.bytes.perPause),
      })),
      langgraphBytesPerPause: langgraph === undefined ? undefined : Math.round(langgraph.perPause),
      flatRatio: FLAT_RATIO,
      synchronous: run.backend === "sqlite" ? run.synchronous : undefined,
    },
  };
}

function breakdown(bytes: Bytes): string {
  return Object.entries(bytes.byTable)
    .filter(([, b]) => Math.abs(b) >= 1)
    .sort((a, b) => b[1] - a[1])
    .map(([table, b]) => `${table} ${Math.round(b)} B`)
    .join(", ");
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
