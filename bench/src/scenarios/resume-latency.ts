import { randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { type App, createApp, ExecutionStatus, MemoryStore, PauseStatus, type Store } from "@agboss/core";
import type { PauseRecord, StoredExecution, ThreadRecord } from "@agboss/core/store";
import { type SqliteHandle, SqliteStore, sqliteStore } from "@agboss/store-sqlite";
import {
  ApprovalApplication,
  MANAGER,
  ManagerInbox,
  REFUND_ANSWER,
  REFUND_REQUEST,
  RefundStart,
  refundRuns,
} from "../approval-app.js";
import { type PhaseSummary, summarizeLatencies } from "../measure.js";
import { CallTimings } from "../store-timing.js";
import type { ScenarioContext, SoloResult, SoloScenario } from "./scenario.js";

// How long one `app.resume` takes while many other pauses wait in the same store. An executor app fills
// the store and makes fresh pauses; a second app on its own connection (a stand-in for another process,
// with nothing of those executions in memory) answers them. Only the resume call is timed.

/** The tenant whose fresh pauses are resumed; half of the waiting pauses are its too. */
const MEASURED_TENANT = "acme";
/** The other tenants, which share the other half. */
const OTHER_TENANTS = [
  "globex",
  "initech",
  "umbrella",
  "hooli",
  "soylent",
  "stark",
  "wayne",
  "wonka",
  "tyrell",
];
/** Fresh pauses kept waiting ahead of the one resumed, so a resume never answers the pause made just before. */
const LAG = 10;
/** Untimed round trips per store before measuring (JIT, statement caches, SQLite pages). */
const WARMUP = 20;
/** Resumes a store does before the other store takes its turn. */
const CHUNK = 10;
/** Pauses seeded by real executions; beyond this many, by copies of one of them. */
const EXECUTED = 1_000;

function tenantOf(index: number): string {
  return index % 2 === 0 ? MEASURED_TENANT : (OTHER_TENANTS[(index >> 1) % OTHER_TENANTS.length] as string);
}

/** The better-sqlite3 constructor the store itself loads (the bench does not need its type package). */
const openDatabase = (path: string) => {
  const Database = createRequire(import.meta.url)("better-sqlite3") as new (file: string) => SqliteHandle;
  return new Database(path);
};

/** The better-sqlite3 call the pending count needs. */
interface CountingHandle {
  prepare(sql: string): { get(...params: unknown[]): unknown };
}

interface LevelResult {
  readonly pending: number;
  /** Pending pauses counted in the database after the level was measured (SQLite only). */
  readonly counted: number | undefined;
  readonly latency: PhaseSummary;
  readonly seedSeconds: number;
  readonly seededBy: string;
  readonly fileMb: number | undefined;
  /** With `--trace-store`: per resume, the resumer's store calls and the SQL statements run meanwhile. */
  readonly breakdown: readonly { name: string; calls: number; ms: number }[];
}

/** A fresh pause on the measured tenant: executes until the channel pauses it; returns its pauseId. */
async function freshPause(executor: App, inbox: ManagerInbox, threadId: string): Promise<string> {
  const paused = await executor.execute(
    RefundStart,
    { text: REFUND_REQUEST },
    { threadId, ownerId: "customer-1", tenant: { tenantId: MEASURED_TENANT } },
  );
  if (paused.status !== ExecutionStatus.Paused)
    throw new Error(`${threadId} did not pause: ${paused.status}`);
  return inbox.take(`${MEASURED_TENANT}/${threadId}`);
}

/** Answers `pauseId` from the other app and checks that the tool ran and the agent answered. */
async function resumeChecked(resumer: App, pauseId: string): Promise<void> {
  const before = refundRuns.agboss;
  const done = await resumer.resume(
    { pauseId, decision: { approved: true } },
    { tenantId: MEASURED_TENANT, answeredBy: MANAGER },
  );
  const text = (done.output as { text?: unknown } | undefined)?.text;
  if (
    done.status !== ExecutionStatus.Completed ||
    text !== REFUND_ANSWER ||
    refundRuns.agboss !== before + 1
  ) {
    throw new Error(`resume of ${pauseId} ended ${done.status} with ${JSON.stringify(done.output)}`);
  }
}

/** Copies a real waiting tree's thread, execution and pause records under new ids (the bulk seed). */
class RecordCloner {
  constructor(
    private readonly pause: PauseRecord,
    private readonly execution: StoredExecution,
    private readonly thread: ThreadRecord,
  ) {}

  static async from(store: Store): Promise<RecordCloner> {
    const [pause] = await store.pauses.list({
      tenantId: MEASURED_TENANT,
      statuses: [PauseStatus.Pending],
      limit: 1,
    });
    if (pause === undefined) throw new Error("no pending pause to copy");
    const execution = await store.executions.findByTenantIdAndExecutionId(
      pause.tenantId,
      pause.rootExecutionId,
    );
    const thread = await store.threads.findByTenantIdAndThreadId(pause.tenantId, pause.threadId);
    if (execution === undefined || thread === undefined) throw new Error("the pause's tree is incomplete");
    return new RecordCloner(pause, execution, thread);
  }

  /** Writes the `index`-th copy through the store's own repositories, each its own transaction. */
  async write(store: Store, index: number, now: number): Promise<void> {
    const tenantId = tenantOf(index);
    const threadId = `bulk-${index}`;
    const executionId = randomUUID();
    const swap = (text: string) => text.split(this.pause.rootExecutionId).join(executionId);
    const askedAt = now - (index % 86_400) * 1000;
    const record = this.execution.record as Record<string, unknown>;
    await store.threads.save({
      ...this.thread,
      tenantId,
      threadId,
      ownerId: `customer-${index % 997}`,
      latestExecutionId: executionId,
      createdAt: askedAt,
      updatedAt: askedAt,
    });
    await store.executions.save({
      ...this.execution,
      tenantId,
      executionId,
      rootExecutionId: executionId,
      threadId,
      startedAt: askedAt,
      updatedAt: askedAt,
      record: { ...record, tenantId, threadId, executionId, rootExecutionId: executionId },
    });
    await store.pauses.findOrCreate({
      ...this.pause,
      tenantId,
      pauseId: randomUUID(),
      idempotencyKey: swap(this.pause.idempotencyKey),
      threadId,
      rootExecutionId: executionId,
      executionId,
      ownerId: `customer-${index % 997}`,
      askedAt,
    });
  }
}

/** One store filled to one level, with the app that fills it and the app that resumes. */
interface LevelStore {
  readonly level: number;
  readonly path: string | undefined;
  readonly database: SqliteHandle | undefined;
  readonly store: Store;
  readonly executor: App;
  readonly resumer: App;
  readonly inbox: ManagerInbox;
  /** With `--trace-store`: the resumer's store calls and this file's SQL, counted only while it resumes. */
  readonly traces: readonly CallTimings[];
  /** Fresh pauses made and not yet resumed, oldest first. */
  readonly queue: string[];
  readonly samples: number[];
  made: number;
  seedSeconds: number;
  seededBy: string;
}

async function openLevelStore(
  context: ScenarioContext,
  level: number,
  synchronous: string,
): Promise<LevelStore> {
  const sqlite = context.backend === "sqlite";
  const path = sqlite ? join(context.dir, `pending-${level}.sqlite`) : undefined;
  // The executor's connection is ours, so the seed can run with synchronous=OFF and then go back.
  const database = path === undefined ? undefined : openDatabase(path);
  const store: Store =
    database === undefined
      ? new MemoryStore()
      : await SqliteStore.open({ database, synchronous: synchronous as "FULL" | "NORMAL" });
  const executor = await createApp(ApprovalApplication, { store });
  // The resumer: its own connection (in memory, the same store), nothing of the executions in memory.
  const resumer = await createApp(ApprovalApplication, {
    store: path === undefined ? store : sqliteStore({ path, synchronous: synchronous as "FULL" | "NORMAL" }),
  });
  const traces: CallTimings[] = [];
  if (context.trace !== undefined) {
    const calls = new CallTimings();
    const { threads, executions, leases, pauses, checkpointer } = resumer.store;
    for (const [name, target] of Object.entries({ threads, executions, leases, pauses, checkpointer })) {
      calls.wrap(target, name);
    }
    traces.push(calls);
    const statements = path === undefined ? undefined : context.sqlTimings?.(path);
    if (statements !== undefined) traces.push(statements);
  }
  for (const t of traces) t.enabled = false;
  const inbox = executor.get(ManagerInbox);
  return {
    level,
    path,
    database,
    store,
    executor,
    resumer,
    inbox,
    traces,
    queue: [],
    samples: [],
    made: 0,
    seedSeconds: 0,
    seededBy: "",
  };
}

async function closeLevelStore(s: LevelStore): Promise<void> {
  await s.resumer.close();
  await s.executor.close();
  await s.store.close();
  s.database?.close();
}

/**
 * Fills `s` to its level: the first {@link EXECUTED} pauses from real executions (threads, execution
 * records, checkpoints and pauses exactly as an application leaves them), the rest copies of one such
 * tree written through the store's repositories. The executor's connection runs with synchronous=OFF.
 */
async function seed(s: LevelStore, synchronous: string, progress: (line: string) => void): Promise<void> {
  const began = performance.now();
  s.database?.pragma("synchronous = OFF");
  const step = Math.max(1, Math.floor(s.level / 5));
  let cloner: RecordCloner | undefined;
  const label = s.level.toLocaleString("en-US");
  for (let seeded = 0; seeded < s.level; ) {
    if (seeded < EXECUTED) {
      const tenantId = tenantOf(seeded);
      const threadId = `seed-${seeded}`;
      const paused = await s.executor.execute(
        RefundStart,
        { text: REFUND_REQUEST },
        { threadId, ownerId: `customer-${seeded % 997}`, tenant: { tenantId } },
      );
      if (paused.status !== ExecutionStatus.Paused) throw new Error(`${threadId} did not pause`);
      s.inbox.take(`${tenantId}/${threadId}`);
    } else {
      cloner ??= await RecordCloner.from(s.store);
      await cloner.write(s.store, seeded, Date.now());
    }
    seeded += 1;
    if (seeded % step === 0 && seeded < s.level) {
      progress(
        `  store ${label}: seeded ${seeded.toLocaleString("en-US")} pending pauses (${((performance.now() - began) / 1000).toFixed(1)} s)`,
      );
    }
  }
  s.database?.pragma(`synchronous = ${synchronous}`);
  s.seedSeconds = (performance.now() - began) / 1000;
  const executed = Math.min(EXECUTED, s.level);
  s.seededBy =
    s.level > executed
      ? `${executed.toLocaleString("en-US")} executions + ${(s.level - executed).toLocaleString("en-US")} copies`
      : `${executed.toLocaleString("en-US")} executions`;
  progress(`  store ${label}: ${label} pending pauses in ${s.seedSeconds.toFixed(1)} s (${s.seededBy})`);
}

/** Makes one fresh pause on `s`, resumes its oldest one, and keeps the resume's time when `timed`. */
async function cycle(s: LevelStore, timed: boolean): Promise<void> {
  s.queue.push(await freshPause(s.executor, s.inbox, `fresh-${s.made++}`));
  const pauseId = s.queue.shift() as string;
  if (timed) for (const t of s.traces) t.enabled = true;
  const t0 = performance.now();
  await resumeChecked(s.resumer, pauseId);
  const elapsed = performance.now() - t0;
  if (timed) {
    for (const t of s.traces) t.enabled = false;
    s.samples.push(elapsed);
  }
}

/**
 * Resumes on every store in turns of {@link CHUNK} (the order flips each turn), so each level is timed
 * under the same machine load as the others: the ratio between levels does not drift with the disk.
 */
async function measure(
  stores: readonly LevelStore[],
  resumes: number,
  progress: (line: string) => void,
): Promise<void> {
  for (const s of stores) {
    for (let i = 0; i < LAG; i += 1) s.queue.push(await freshPause(s.executor, s.inbox, `fresh-${s.made++}`));
    for (let i = 0; i < WARMUP; i += 1) await cycle(s, false);
    for (const t of s.traces) t.reset();
  }
  let turn = 0;
  let reported = 0;
  for (let done = 0; done < resumes; done += CHUNK) {
    const count = Math.min(CHUNK, resumes - done);
    const order = turn++ % 2 === 0 ? stores : [...stores].reverse();
    for (const s of order) for (let i = 0; i < count; i += 1) await cycle(s, true);
    if ((done + count) * 4 >= (reported + 1) * resumes && done + count < resumes) {
      reported = Math.floor(((done + count) * 4) / resumes);
      progress(`  ${done + count}/${resumes} resumes per store`);
    }
  }
  // Leave exactly `level` waiting, as the table says.
  for (const s of stores)
    while (s.queue.length > 0) await resumeChecked(s.resumer, s.queue.shift() as string);
}

const ms = (value: number) => `${value.toFixed(2)} ms`;

export const resumeLatencyScenario: SoloScenario = {
  kind: "solo",
  id: "resume-latency",
  title: "resume latency under pending pauses",
  description:
    "app.resume (from a second app on its own connection) of a fresh pause, in a store where 1,000 and in one where 100,000 other pauses wait over 10 tenants; the stores take turns.",
  backends: ["sqlite", "memory"],
  async run(context: ScenarioContext): Promise<SoloResult> {
    const { progress } = context;
    const synchronous = context.synchronous === "default" ? "FULL" : context.synchronous;
    const stores: LevelStore[] = [];
    const results: LevelResult[] = [];
    try {
      for (const level of context.pendingLevels) {
        const s = await openLevelStore(context, level, synchronous);
        stores.push(s);
        await seed(s, synchronous, progress);
      }
      progress(`  measuring ${context.resumes} resumes per store, in turns of ${CHUNK}`);
      await measure(stores, context.resumes, progress);
      for (const s of stores) {
        const counted =
          s.database === undefined
            ? undefined
            : Number(
                (
                  (s.database as unknown as CountingHandle)
                    .prepare("select count(*) as n from agboss_pauses where status = ?")
                    .get(PauseStatus.Pending) as { n: number }
                ).n,
              );
        if (counted !== undefined && counted !== s.level) {
          throw new Error(`expected ${s.level} pending pauses in the store, counted ${counted}`);
        }
        const latency = summarizeLatencies("agboss", `${s.level} pending`, s.samples);
        results.push({
          pending: s.level,
          counted,
          latency,
          seedSeconds: s.seedSeconds,
          seededBy: s.seededBy,
          fileMb: s.path === undefined ? undefined : fileMb(s.path),
          breakdown: s.traces.flatMap((t) => t.perExecution(context.resumes)),
        });
        progress(
          `  ${s.level.toLocaleString("en-US")} pending: p50 ${ms(latency.p50Ms)}, p99 ${ms(latency.p99Ms)}`,
        );
      }
    } finally {
      for (const s of stores) await closeLevelStore(s);
    }
    return report(results, { sqlite: context.backend === "sqlite", synchronous, resumes: context.resumes });
  },
};

function fileMb(path: string): number {
  let bytes = 0;
  for (const file of [path, `${path}-wal`]) {
    try {
      bytes += statSync(file).size;
    } catch {
      // no WAL file
    }
  }
  return bytes / 1024 / 1024;
}

function report(
  results: readonly LevelResult[],
  run: { sqlite: boolean; synchronous: string; resumes: number },
): SoloResult {
  const first = results[0];
  const last = results.at(-1);
  const ratio =
    first !== undefined && last !== undefined ? last.latency.p50Ms / first.latency.p50Ms : Number.NaN;
  const header = ["pending pauses", "resumes", "p50", "p99", "mean", "seeded by", "seed time", "db size"];
  const rows = results.map((r) => [
    r.pending.toLocaleString("en-US"),
    String(r.latency.count),
    ms(r.latency.p50Ms),
    ms(r.latency.p99Ms),
    ms(r.latency.meanMs),
    r.seededBy,
    `${r.seedSeconds.toFixed(1)} s`,
    r.fileMb === undefined ? "-" : `${r.fileMb.toFixed(1)} MB`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => (i === 5 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join(" | ")} |`;
  const lines = [
    "resume latency under pending pauses (AGBoss alone):",
    line(header),
    `|${widths.map((w, i) => (i === 5 ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|`,
    ...rows.map(line),
  ];
  if (first !== undefined && last !== undefined && last !== first) {
    const verdict = ratio <= FLAT_RATIO ? "flat" : "NOT flat";
    lines.push(
      `  p50(${last.pending.toLocaleString("en-US")}) / p50(${first.pending.toLocaleString("en-US")}) = ${ratio.toFixed(2)}x: ${verdict} (flat means ≤ ${FLAT_RATIO}x)`,
    );
  }
  if (results.some((r) => r.breakdown.length > 0)) {
    const names = [...new Set(results.flatMap((r) => r.breakdown.map((b) => b.name)))];
    const cell = (r: LevelResult, name: string) => {
      const row = r.breakdown.find((b) => b.name === name);
      return row === undefined ? "-" : `${row.calls.toFixed(1)} × ${ms(row.ms)}`;
    };
    const rows = names
      .map((name) => [name, ...results.map((r) => cell(r, name))])
      .filter((row) => results.some((r) => (r.breakdown.find((b) => b.name === row[0])?.ms ?? 0) >= 0.005));
    lines.push(
      "  per resume (--trace-store): calls × wall time, by pending pauses",
      ...rows.map(
        (row) =>
          `    ${(row[0] as string).padEnd(34)} ${row
            .slice(1)
            .map((c) => c.padStart(20))
            .join(" ")}`,
      ),
    );
  }
  lines.push(
    `  half the pending pauses are on the resumed tenant (${MEASURED_TENANT}), half over ${OTHER_TENANTS.length} others; one thread each`,
    run.sqlite
      ? `  stores: one SQLite file per level, synchronous=${run.synchronous} while measured (seeded with synchronous=OFF); levels take turns ${CHUNK} resumes at a time`
      : "  stores: one MemoryStore per level, shared by its two apps; levels take turns",
  );
  return {
    lines,
    figures: {
      levels: results.map((r) => ({
        pending: r.pending,
        counted: r.counted,
        resumes: r.latency.count,
        p50Ms: round(r.latency.p50Ms),
        p99Ms: round(r.latency.p99Ms),
        meanMs: round(r.latency.meanMs),
        seededBy: r.seededBy,
        seedSeconds: round(r.seedSeconds),
        fileMb: r.fileMb === undefined ? undefined : round(r.fileMb),
      })),
      p50Ratio: results.length > 1 ? round(ratio) : undefined,
      flatRatio: FLAT_RATIO,
      synchronous: run.sqlite ? run.synchronous : undefined,
    },
  };
}

/** The most p50 may grow from the first level to the last and still count as flat. */
const FLAT_RATIO = 1.25;

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
