import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { ConsoleLogger, ExecutionStatus, LogLevel, PauseStatus, type Store } from "@agboss/core";
import { postgresStore } from "@agboss/store-postgres";
import { type SqliteHandle, SqliteStore } from "@agboss/store-sqlite";
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
import { describeUrl, type PostgresServer, quote } from "../postgres.js";
import {
  BenchClock,
  createAppWithoutSweep,
  type FromWorker,
  type RecoveryStoreSpec,
  storeOf,
  type ToWorker,
  type WorkerConfig,
} from "../recovery-support.js";
import type { ScenarioContext, SoloResult, SoloScenario } from "./scenario.js";

// B4: executions interrupted right after their answers were recorded (phase 1 of `app.resume`, the
// state a process leaves that died before moving the tree) are recovered by the sweep of one fresh
// instance, then of two at once, each a process of its own. See the README's `recovery` section.

/** The workers' clocks run this far ahead, so every answer is past the sweep's 1-s grace at once. */
const SHIFT_MS = 5_000;
/** `app.sweepOnce(retentionMs)`: the default `pauseRecordRetention`, 24 h. */
const RETENTION_MS = 24 * 3600 * 1000;
/** A recovery run that has not completed every execution by then stops and fails. */
const TIME_LIMIT_MS = 10 * 60 * 1000;
/** How long a worker may take to open its app. */
const READY_TIMEOUT_MS = 120_000;
/** How long a worker may take to finish its last sweep and close after `stop`. */
const STOP_TIMEOUT_MS = 60_000;
/** How often the parent counts completed executions. */
const POLL_MS = 250;
/** How often it prints a progress line while instances recover. */
const PROGRESS_MS = 5_000;
/** Executions are spread over this many tenants, one thread each. */
const TENANTS = 10;
/** The resume sample: fresh pauses kept waiting ahead of the one resumed, and untimed warm-up resumes. */
const LAG = 10;
const WARMUP = 20;
/** Executions seeded at once on Postgres (its pool has 10 connections); SQLite seeds one at a time. */
const POSTGRES_SEED_CONCURRENCY = 8;
/** The issue's target: 10,000 executions by one instance in under 2 minutes. */
const TARGET_PER_SECOND = 10_000 / 120;
/** Two instances meet "about half" the one-instance time at or below this fraction of it. */
const TWO_INSTANCE_TARGET = 0.6;

const WORKER = fileURLToPath(new URL("../recover-worker.ts", import.meta.url));
const BENCH_DIR = dirname(dirname(dirname(WORKER)));

const tenantOf = (index: number) => `tenant-${index % TENANTS}`;

/** One interrupted execution as seeded. */
interface Seeded {
  readonly tenantId: string;
  readonly threadId: string;
  readonly pauseId: string;
  readonly rootExecutionId: string;
  /** The pause's idempotency key (its tool step's). */
  readonly idempotencyKey: string;
}

/** The better-sqlite3 constructor the store itself loads (the bench does not need its type package). */
const openDatabase = (path: string) => {
  const Database = createRequire(import.meta.url)("better-sqlite3") as new (file: string) => SqliteHandle;
  return new Database(path);
};

interface Statement {
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
/** The better-sqlite3 calls the parent's checks need. */
interface QueryHandle {
  prepare(sql: string): Statement;
}

/** The parent's view of a recovery store: what it watches and checks, never what it writes. */
interface WatchedStore {
  /** Root executions recorded completed, and the latest `updated_at` among them (workers' clock). */
  completed(): Promise<{ count: number; lastAt: number }>;
  /** Root executions by status, keyed `tenantId/executionId`. */
  roots(): Promise<Map<string, string>>;
  /** Pauses by status, keyed `tenantId/pauseId`. */
  pauses(): Promise<Map<string, string>>;
  close(): Promise<void>;
}

const COMPLETED_SQL = (table: string) =>
  `select count(*) as n, max(updated_at) as last from ${table} where status = '${ExecutionStatus.Completed}' and execution_id = root_execution_id`;

function watchSqlite(path: string): WatchedStore {
  const handle = openDatabase(path);
  handle.pragma("busy_timeout = 5000");
  const query = handle as unknown as QueryHandle;
  const completed = query.prepare(COMPLETED_SQL("agboss_executions"));
  return {
    completed: async () => {
      const row = completed.get() as { n: number; last: number | null };
      return { count: Number(row.n), lastAt: Number(row.last ?? 0) };
    },
    roots: async () => keyed(query.prepare(ROOTS_SQL("agboss_executions")).all() as KeyedRow[]),
    pauses: async () => keyed(query.prepare(PAUSES_SQL("agboss_pauses")).all() as KeyedRow[]),
    close: async () => handle.close(),
  };
}

function watchPostgres(server: PostgresServer, schema: string): WatchedStore {
  const table = (name: string) => `${quote(schema)}.${name}`;
  return {
    completed: async () => {
      const { rows } = await server.query<{ n: string; last: string | null }>(
        COMPLETED_SQL(table("agboss_executions")),
      );
      return { count: Number(rows[0]?.n ?? 0), lastAt: Number(rows[0]?.last ?? 0) };
    },
    roots: async () => keyed((await server.query<KeyedRow>(ROOTS_SQL(table("agboss_executions")))).rows),
    pauses: async () => keyed((await server.query<KeyedRow>(PAUSES_SQL(table("agboss_pauses")))).rows),
    close: async () => {},
  };
}

type KeyedRow = { key: string; status: string };
const ROOTS_SQL = (table: string) =>
  `select tenant_id || '/' || execution_id as key, status from ${table} where execution_id = root_execution_id`;
const PAUSES_SQL = (table: string) => `select tenant_id || '/' || pause_id as key, status from ${table}`;
const keyed = (rows: readonly KeyedRow[]) => new Map(rows.map((r) => [r.key, r.status]));

/** Where the scenario's stores live: SQLite files in the run's directory, or schemas on the server. */
interface RecoveryBackend {
  readonly name: string;
  /** The store the executions are seeded in (and the resume sample runs on). */
  readonly seed: RecoveryStoreSpec;
  /** Opens the seed store for seeding: on SQLite with `synchronous=OFF` on this connection only. */
  openSeedStore(): Promise<{ store: Store; close(): Promise<void> }>;
  /** Makes an identical copy of the seeded store for one recovery run (the seed store is closed). */
  copy(label: string): Promise<RecoveryStoreSpec>;
  watch(spec: RecoveryStoreSpec): WatchedStore;
  /** Database settings, for the notes. */
  readonly describe: string;
  /** Drops what the scenario made (Postgres schemas; the runner removes the SQLite directory). */
  cleanup(): Promise<void>;
}

function sqliteBackend(dir: string): RecoveryBackend {
  const seedPath = join(dir, "seed.sqlite");
  return {
    name: "sqlite",
    seed: { kind: "sqlite", path: seedPath },
    async openSeedStore() {
      const database = openDatabase(seedPath);
      const store = await SqliteStore.open({ database, synchronous: "FULL" });
      // The seed is untimed: no disk sync per commit on this connection. The file is the same.
      database.pragma("synchronous = OFF");
      return {
        store,
        async close() {
          await store.close();
          // Everything into the main file, so a copy of that file alone is the whole database.
          database.pragma("wal_checkpoint(TRUNCATE)");
          database.close();
        },
      };
    },
    async copy(label) {
      const path = join(dir, `${label}.sqlite`);
      const wal = `${seedPath}-wal`;
      if (existsSync(wal) && statSync(wal).size > 0) throw new Error(`${wal} is not empty after the seed`);
      copyFileSync(seedPath, path);
      return { kind: "sqlite", path };
    },
    watch: (spec) => watchSqlite((spec as { path: string }).path),
    describe: `SQLite files under ${dir}, WAL, synchronous=FULL (the store's default) while recovering and resuming; busy_timeout 5000 ms`,
    cleanup: async () => {},
  };
}

async function postgresBackend(server: PostgresServer): Promise<RecoveryBackend> {
  const made: string[] = [];
  const fresh = async (label: string) => {
    const schema = await server.freshSchema("recovery", label);
    made.push(schema);
    return schema;
  };
  const seedSchema = await fresh("seed");
  const seed: RecoveryStoreSpec = { kind: "postgres", url: server.url, schema: seedSchema };
  const openStore = async (spec: { url: string; schema: string }) =>
    postgresStore({ connectionString: spec.url, schema: spec.schema })({
      appName: "bench-recovery",
      clock: new BenchClock(0),
      logger: new ConsoleLogger({ level: LogLevel.Warn }),
    });
  return {
    name: "postgres",
    seed,
    async openSeedStore() {
      // The seed is untimed: its connections commit without waiting for the WAL flush.
      const url = new URL(server.url);
      url.searchParams.set("options", "-c synchronous_commit=off");
      const store = await openStore({ url: url.toString(), schema: seedSchema });
      return { store, close: () => store.close() };
    },
    async copy(label) {
      const schema = await fresh(label);
      // The store makes its own tables (and migration records) in the new schema; then the rows.
      await (await openStore({ url: server.url, schema })).close();
      const { rows } = await server.query<{ name: string }>(
        "select table_name as name from information_schema.tables where table_schema = $1 and table_name like 'agboss\\_%' and table_name not like 'agboss\\_migration%' order by table_name",
        [seedSchema],
      );
      for (const { name } of rows) {
        await server.query(
          `insert into ${quote(schema)}.${quote(name)} select * from ${quote(seedSchema)}.${quote(name)}`,
        );
      }
      await server.query(`analyze`);
      return { kind: "postgres", url: server.url, schema };
    },
    watch: (spec) => watchPostgres(server, (spec as { schema: string }).schema),
    describe: `postgres at ${describeUrl(server.url)}: ${server.facts}; one fresh schema per store (seed, one, two), dropped at the end; each instance's store has its own pool (10 connections)`,
    async cleanup() {
      for (const schema of made) await server.dropSchema(schema);
    },
  };
}

/** Executes `n` executions until they pause and records each answer as phase 1 only (Pending → Resolved). */
async function seed(
  backend: RecoveryBackend,
  n: number,
  progress: (line: string) => void,
): Promise<{ seeded: Seeded[]; seconds: number }> {
  const began = performance.now();
  const opened = await backend.openSeedStore();
  const clock = new BenchClock(0);
  const seeded: Seeded[] = new Array(n);
  try {
    const app = await createAppWithoutSweep(ApprovalApplication, { store: opened.store }, clock);
    try {
      const inbox = app.get(ManagerInbox);
      const concurrency = backend.name === "postgres" ? POSTGRES_SEED_CONCURRENCY : 1;
      const step = Math.max(1, Math.floor(n / 5));
      let next = 0;
      let done = 0;
      const one = async (index: number) => {
        const tenantId = tenantOf(index);
        const threadId = `recover-${index}`;
        const paused = await app.execute(
          RefundStart,
          { text: REFUND_REQUEST },
          { threadId, ownerId: `customer-${index % 997}`, tenant: { tenantId } },
        );
        if (paused.status !== ExecutionStatus.Paused) throw new Error(`${threadId} did not pause`);
        const pauseId = inbox.take(`${tenantId}/${threadId}`);
        // What `app.resume` records before it moves the tree; the process "dies" right after.
        const resolved = await opened.store.pauses.resolve(
          tenantId,
          pauseId,
          { decision: { approved: true }, responder: "bench" },
          clock.now(),
        );
        if (resolved === undefined) throw new Error(`the pause of ${threadId} was not pending`);
        seeded[index] = {
          tenantId,
          threadId,
          pauseId,
          rootExecutionId: resolved.rootExecutionId,
          idempotencyKey: resolved.idempotencyKey,
        };
        done += 1;
        if (done % step === 0 && done < n) {
          progress(
            `  seeded ${done.toLocaleString("en-US")}/${n.toLocaleString("en-US")} (${((performance.now() - began) / 1000).toFixed(1)} s)`,
          );
        }
      };
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < n) await one(next++);
        }),
      );
    } finally {
      await app.close();
    }
  } finally {
    await opened.close();
  }
  const seconds = (performance.now() - began) / 1000;
  progress(
    `  seeded ${n.toLocaleString("en-US")} executions paused with their answers recorded (phase 1 only) in ${seconds.toFixed(1)} s`,
  );
  return { seeded, seconds };
}

/**
 * The comparison: `app.resume` of fresh pauses on the seed store (it still holds every seeded answer,
 * unrecovered: the parent's apps never sweep), answered from a second app on its own connection, as
 * in `resume-latency`. Only the resume call is timed; returns each one's wall time, ms. Taken right
 * before and right after each recovery run (a quarter of the sample each time), so a run and the
 * resumes it is compared with see about the same machine load.
 */
async function resumeSample(
  backend: RecoveryBackend,
  resumes: number,
  label: string,
  progress: (line: string) => void,
): Promise<number[]> {
  const clock = new BenchClock(0);
  const executor = await createAppWithoutSweep(ApprovalApplication, { store: storeOf(backend.seed) }, clock);
  const samples: number[] = [];
  try {
    const resumer = await createAppWithoutSweep(ApprovalApplication, { store: storeOf(backend.seed) }, clock);
    try {
      const inbox = executor.get(ManagerInbox);
      const queue: { tenantId: string; pauseId: string }[] = [];
      let made = 0;
      const fresh = async () => {
        const tenantId = tenantOf(made);
        const threadId = `sample-${label}-${made++}`;
        const paused = await executor.execute(
          RefundStart,
          { text: REFUND_REQUEST },
          { threadId, ownerId: "customer-1", tenant: { tenantId } },
        );
        if (paused.status !== ExecutionStatus.Paused) throw new Error(`${threadId} did not pause`);
        queue.push({ tenantId, pauseId: inbox.take(`${tenantId}/${threadId}`) });
      };
      const cycle = async (timed: boolean) => {
        await fresh();
        const { tenantId, pauseId } = queue.shift() as { tenantId: string; pauseId: string };
        const before = refundRuns.agboss;
        const t0 = performance.now();
        const done = await resumer.resume(
          { pauseId, decision: { approved: true } },
          { tenantId, answeredBy: MANAGER },
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
        if (timed) samples.push(elapsed);
      };
      for (let i = 0; i < LAG; i += 1) await fresh();
      for (let i = 0; i < WARMUP; i += 1) await cycle(false);
      const step = Math.max(1, Math.floor(resumes / 4));
      for (let i = 1; i <= resumes; i += 1) {
        await cycle(true);
        if (i % step === 0 && i < resumes) progress(`  resume sample (${label}): ${i}/${resumes}`);
      }
    } finally {
      await resumer.close();
    }
  } finally {
    await executor.close();
  }
  const summary = summarizeLatencies("agboss", "resume", samples);
  progress(
    `  resume sample (${label}): ${resumes} resumes, mean ${summary.meanMs.toFixed(2)} ms, p50 ${summary.p50Ms.toFixed(2)} ms, p99 ${summary.p99Ms.toFixed(2)} ms`,
  );
  return samples;
}

const mean = (values: readonly number[]) =>
  values.reduce((sum, v) => sum + v, 0) / Math.max(1, values.length);

/** One worker process, as the parent sees it. */
class Worker {
  readonly child: ChildProcess;
  readonly ready: Promise<Extract<FromWorker, { type: "ready" }>>;
  readonly done: Promise<Extract<FromWorker, { type: "done" }>>;
  /** From spawning the process to its app being open and ready, ms (Node, tsx, the app and its store). */
  startMs = Number.NaN;
  readonly #stderr: string[] = [];

  constructor(
    readonly config: WorkerConfig,
    progress: (line: string) => void,
  ) {
    const spawnedAt = performance.now();
    this.child = spawn(
      process.execPath,
      ["--conditions=@agboss/source", "--import", import.meta.resolve("tsx"), WORKER, JSON.stringify(config)],
      { cwd: BENCH_DIR, stdio: ["ignore", "inherit", "pipe", "ipc"] },
    );
    let buffered = "";
    this.child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        if (this.#stderr.length < 40) this.#stderr.push(line);
        progress(`  [${config.instance}] ${line}`);
      }
    });
    const exited = new Promise<never>((_, reject) => {
      this.child.once("exit", (code, signal) => {
        reject(
          new Error(
            `recover worker ${config.instance} exited (${signal ?? code}) early${this.#stderr.length > 0 ? `:\n${this.#stderr.join("\n")}` : ""}`,
          ),
        );
      });
    });
    exited.catch(() => {});
    const message = <T extends FromWorker["type"]>(type: T) =>
      Promise.race([
        exited,
        new Promise<Extract<FromWorker, { type: T }>>((resolve, reject) => {
          this.child.on("message", (m: FromWorker) => {
            if (m.type === "ready") this.startMs = performance.now() - spawnedAt;
            if (m.type === "failed") reject(new Error(`recover worker ${m.instance} failed: ${m.message}`));
            if (m.type === type) resolve(m as Extract<FromWorker, { type: T }>);
          });
        }),
      ]);
    this.ready = message("ready");
    this.done = message("done");
    this.ready.catch(() => {});
    this.done.catch(() => {});
  }

  tell(message: ToWorker): void {
    if (this.child.connected) this.child.send(message);
  }

  /** Trees it has started recovering so far: the lines of its own list. */
  recoveredSoFar(): number {
    const path = this.config.recoveredPath;
    if (!existsSync(path)) return 0;
    const text = readFileSync(path, "utf8");
    let lines = 0;
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines += 1;
    return lines;
  }

  /** Ends the process if it is still there (by its own pid). */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** What one instance did in a recovery run. */
interface InstanceResult {
  readonly instance: string;
  /** From spawning the process until its app was open, ms. */
  readonly startMs: number;
  /** Trees it started recovering (`sweep.recovering`). */
  readonly recovered: number;
  /** Tool runs in the ledger by this instance. */
  readonly toolRuns: number;
  readonly sweeps: number;
  readonly cpuSeconds: number;
  readonly problems: Readonly<Record<string, number>>;
  readonly samples: readonly string[];
  /** p50 / max wall time of its `sweepOnce` calls that recovered something. */
  readonly busySweeps: { readonly count: number; readonly p50Ms: number; readonly maxMs: number };
  /** Tree leases it asked for, and how many were refused. */
  readonly leases: { readonly tried: number; readonly refused: number };
  /** Its longest stretch without a timer running. */
  readonly stall: Extract<FromWorker, { type: "done" }>["stall"];
}

/** One recovery run (one instance, or two at once). */
interface RunResult {
  readonly label: string;
  /** The normal resumes timed right before and right after this run, together. */
  readonly resume: PhaseSummary;
  /** Their means before and after the run, ms. */
  readonly resumeMeanMs: { readonly before: number; readonly after: number };
  /** The machine's 1-minute load average when the run began and when it ended. */
  readonly loadAverage: { readonly atGo: number; readonly atEnd: number };
  /**
   * CPU seconds the database server's processes used during the run, when they run on this machine
   * and can be read (a local Postgres on Linux); undefined otherwise (SQLite runs inside the workers).
   */
  readonly serverCpuSeconds: number | undefined;
  readonly instances: readonly InstanceResult[];
  readonly executions: number;
  /** From the first `sweepOnce` call to the last execution recorded completed. */
  readonly recoverSeconds: number;
  readonly perSecond: number;
  /** Wall time per recovered execution. */
  readonly msPerExecution: number;
  readonly completed: number;
  /** Checks that failed: each names how many executions it concerns. */
  readonly failures: readonly string[];
  /** Facts worth printing that are not failures (e.g. trees whose recovery was retried). */
  readonly remarks: readonly string[];
}

async function recoverRun(args: {
  label: string;
  instances: readonly string[];
  spec: RecoveryStoreSpec;
  backend: RecoveryBackend;
  seeded: readonly Seeded[];
  dir: string;
  progress: (line: string) => void;
}): Promise<Omit<RunResult, "resume" | "resumeMeanMs">> {
  const { label, spec, seeded, dir, progress } = args;
  const n = seeded.length;
  const slug = label.replace(/\W+/g, "-");
  const ledgerPath = join(dir, `${slug}-tool-runs.tsv`);
  const workers = args.instances.map(
    (instance) =>
      new Worker(
        {
          instance,
          store: spec,
          shiftMs: SHIFT_MS,
          retentionMs: RETENTION_MS,
          ledgerPath,
          recoveredPath: join(dir, `${slug}-recovered-${instance}.txt`),
        },
        progress,
      ),
  );
  const watched = args.backend.watch(spec);
  try {
    await within(Promise.all(workers.map((w) => w.ready)), READY_TIMEOUT_MS, `${label}: opening the apps`);
    progress(
      `  ${label}: ${workers.map((w) => `${w.config.instance} started in ${(w.startMs / 1000).toFixed(1)} s`).join(", ")}; go`,
    );
    const goAt = Date.now();
    const loadAtGo = loadavg()[0] ?? Number.NaN;
    const serverCpuAtGo = args.backend.name === "postgres" ? localPostgresCpuMs() : undefined;
    for (const w of workers) w.tell({ type: "go" });
    let completed = 0;
    let reportedAt = goAt;
    const failedEarly = Promise.race(workers.map((w) => w.done.then(() => undefined)));
    let workerError: unknown;
    failedEarly.catch((error: unknown) => {
      workerError = error;
    });
    while (completed < n && Date.now() - goAt < TIME_LIMIT_MS && workerError === undefined) {
      await sleep(POLL_MS);
      completed = (await watched.completed()).count;
      if (Date.now() - reportedAt >= PROGRESS_MS && completed < n) {
        reportedAt = Date.now();
        const counts = workers
          .map((w) => `${w.config.instance} took ${w.recoveredSoFar().toLocaleString("en-US")}`)
          .join(", ");
        progress(
          `  ${label}: ${completed.toLocaleString("en-US")}/${n.toLocaleString("en-US")} completed after ${((Date.now() - goAt) / 1000).toFixed(1)} s (${counts})`,
        );
      }
    }
    if (workerError !== undefined) throw workerError;
    const loadAtEnd = loadavg()[0] ?? Number.NaN;
    const serverCpuAtEnd = serverCpuAtGo === undefined ? undefined : localPostgresCpuMs();
    for (const w of workers) w.tell({ type: "stop" });
    const done = await within(
      Promise.all(workers.map((w) => w.done)),
      STOP_TIMEOUT_MS,
      `${label}: stopping the workers`,
    );
    const last = await watched.completed();
    const firstSweepAt = Math.min(...done.map((d) => d.firstSweepAt));
    const recoverMs = last.lastAt - SHIFT_MS - firstSweepAt;
    const checked = await check(seeded, watched, ledgerPath, done, dir, slug);
    const result: Omit<RunResult, "resume" | "resumeMeanMs"> = {
      label,
      loadAverage: { atGo: loadAtGo, atEnd: loadAtEnd },
      serverCpuSeconds:
        serverCpuAtGo === undefined || serverCpuAtEnd === undefined
          ? undefined
          : (serverCpuAtEnd - serverCpuAtGo) / 1000,
      executions: n,
      completed: last.count,
      recoverSeconds: recoverMs / 1000,
      perSecond: (n * 1000) / recoverMs,
      msPerExecution: recoverMs / n,
      failures:
        last.count < n
          ? [
              `only ${last.count.toLocaleString("en-US")} of ${n.toLocaleString("en-US")} completed within ${TIME_LIMIT_MS / 60_000} min`,
              ...checked.failures,
            ]
          : checked.failures,
      remarks: checked.remarks,
      instances: done.map((d) => {
        const busy = [...d.busySweepsMs].sort((a, b) => a - b);
        return {
          instance: d.instance,
          startMs: workers.find((w) => w.config.instance === d.instance)?.startMs ?? Number.NaN,
          recovered: d.recovered,
          toolRuns: checked.toolRunsBy.get(d.instance) ?? 0,
          sweeps: d.sweeps,
          cpuSeconds: d.cpuMs / 1000,
          stall: d.stall,
          leases: d.leases,
          problems: d.problems,
          samples: d.samples,
          busySweeps: {
            count: busy.length,
            p50Ms: busy[Math.floor((busy.length - 1) / 2)] ?? Number.NaN,
            maxMs: busy.at(-1) ?? Number.NaN,
          },
        };
      }),
    };
    progress(
      `  ${label}: ${n.toLocaleString("en-US")} recovered in ${result.recoverSeconds.toFixed(1)} s (${result.perSecond.toFixed(1)} exec/s; ${result.instances.map((i) => `${i.instance} ${i.recovered.toLocaleString("en-US")}`).join(", ")})${result.failures.length > 0 ? `; CHECKS FAILED: ${result.failures.join("; ")}` : ""}`,
    );
    return result;
  } finally {
    for (const w of workers) w.kill();
    await watched.close();
  }
}

/**
 * Every seeded execution must end completed with its pause taken, its approved tool must have run
 * exactly once (the shared ledger, keyed by the step's idempotency key), and exactly one instance
 * must have recovered it (each instance's own `sweep.recovering` list).
 */
async function check(
  seeded: readonly Seeded[],
  watched: WatchedStore,
  ledgerPath: string,
  done: readonly Extract<FromWorker, { type: "done" }>[],
  dir: string,
  slug: string,
): Promise<{ failures: string[]; remarks: string[]; toolRunsBy: Map<string, number> }> {
  const failures: string[] = [];
  const remarks: string[] = [];
  const count = (what: string, ids: readonly string[]) => {
    if (ids.length > 0) failures.push(`${ids.length.toLocaleString("en-US")} ${what} (e.g. ${ids[0]})`);
  };
  const roots = await watched.roots();
  const pauses = await watched.pauses();
  const rootOf = (s: Seeded) => `${s.tenantId}/${s.rootExecutionId}`;
  const notCompleted = seeded.filter((s) => roots.get(rootOf(s)) !== ExecutionStatus.Completed);
  const byStatus = new Map<string, number>();
  for (const s of notCompleted) {
    const status = roots.get(rootOf(s)) ?? "missing";
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  }
  if (notCompleted.length > 0) {
    failures.push(
      `${notCompleted.length.toLocaleString("en-US")} executions did not end completed (${[...byStatus].map(([s, k]) => `${k} ${s}`).join(", ")}; e.g. ${rootOf(notCompleted[0] as Seeded)})`,
    );
  }
  count(
    "pauses not taken",
    seeded
      .filter((s) => pauses.get(`${s.tenantId}/${s.pauseId}`) !== PauseStatus.Taken)
      .map((s) => `${s.tenantId}/${s.pauseId}: ${pauses.get(`${s.tenantId}/${s.pauseId}`) ?? "missing"}`),
  );

  // Tool runs: one ledger line per run, keyed by the step's idempotency key.
  const runsByKey = new Map<string, { root: string; instance: string }[]>();
  const toolRunsBy = new Map<string, number>();
  const lines = existsSync(ledgerPath) ? readFileSync(ledgerPath, "utf8").split("\n") : [];
  for (const line of lines) {
    if (line === "") continue;
    const [key = "", root = "", instance = ""] = line.split("\t");
    const runs = runsByKey.get(key) ?? [];
    runs.push({ root, instance });
    runsByKey.set(key, runs);
    toolRunsBy.set(instance, (toolRunsBy.get(instance) ?? 0) + 1);
  }
  const seededKeys = new Set(seeded.map((s) => s.idempotencyKey));
  count("approved tools that never ran", seeded.filter((s) => !runsByKey.has(s.idempotencyKey)).map(rootOf));
  count(
    "approved tools that ran more than once",
    [...runsByKey]
      .filter(([key, runs]) => seededKeys.has(key) && runs.length > 1)
      .map(([key, runs]) => `${key} ×${runs.length} by ${runs.map((r) => r.instance).join("+")}`),
  );
  count(
    "tool runs whose key is not a seeded pause's",
    [...runsByKey].filter(([key]) => !seededKeys.has(key)).map(([key, runs]) => `${key} on ${runs[0]?.root}`),
  );
  const rootsByKey = new Map(seeded.map((s) => [s.idempotencyKey, rootOf(s)]));
  count(
    "tool runs recorded under another execution than their pause's",
    [...runsByKey]
      .filter(([key, runs]) => rootsByKey.has(key) && runs.some((r) => r.root !== rootsByKey.get(key)))
      .map(([key]) => key),
  );

  // Recoveries: each instance's own list of the trees it took.
  const recoveredBy = new Map<string, string[]>();
  for (const d of done) {
    const path = join(dir, `${slug}-recovered-${d.instance}.txt`);
    const listed = existsSync(path) ? readFileSync(path, "utf8").split("\n") : [];
    for (const root of listed) {
      if (root === "") continue;
      const by = recoveredBy.get(root) ?? [];
      by.push(d.instance);
      recoveredBy.set(root, by);
    }
  }
  count(
    "executions no instance recovered",
    seeded.map(rootOf).filter((r) => !recoveredBy.has(r)),
  );
  count(
    "executions recovered by more than one instance",
    [...recoveredBy]
      .filter(([, by]) => new Set(by).size > 1)
      .map(([root, by]) => `${root} by ${by.join("+")}`),
  );
  const retried = [...recoveredBy].filter(([, by]) => by.length > 1 && new Set(by).size === 1);
  if (retried.length > 0) {
    remarks.push(
      `${retried.length} executions were taken up twice by the same instance (a failed attempt retried), e.g. ${retried[0]?.[0]}`,
    );
  }
  return { failures, remarks, toolRunsBy };
}

const ms = (value: number) => `${value.toFixed(2)} ms`;
const n = (value: number) => value.toLocaleString("en-US");

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function report(args: {
  backend: RecoveryBackend;
  executions: number;
  seedSeconds: number;
  runs: readonly RunResult[];
}): SoloResult {
  const { runs } = args;
  const one = runs.find((r) => r.instances.length === 1);
  const two = runs.find((r) => r.instances.length === 2);
  const header = [
    "recovered by",
    "executions",
    "time to recover all",
    "exec/s",
    "ms per execution",
    "vs a resume (mean)",
    "load average",
    "per instance: recovered / tool runs",
    "CPU while sweeping",
    "database server CPU",
    "cores busy",
  ];
  const rows = runs.map((r) => [
    r.label,
    n(r.executions),
    `${r.recoverSeconds.toFixed(1)} s`,
    r.perSecond.toFixed(1),
    ms(r.msPerExecution),
    `${(r.msPerExecution / r.resume.meanMs).toFixed(2)}x (${r.resume.meanMs.toFixed(1)} ms)`,
    `${r.loadAverage.atGo.toFixed(1)} → ${r.loadAverage.atEnd.toFixed(1)}`,
    r.instances.map((i) => `${i.instance} ${n(i.recovered)} / ${n(i.toolRuns)}`).join(", "),
    r.instances.map((i) => `${i.instance} ${i.cpuSeconds.toFixed(1)} s`).join(", "),
    r.serverCpuSeconds === undefined ? "-" : `${r.serverCpuSeconds.toFixed(1)} s`,
    coresBusy(r).toFixed(2),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const left = new Set([0, 7, 8]);
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => (left.has(i) ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join(" | ")} |`;
  const lines = [
    "recovery of interrupted executions (AGBoss alone):",
    line(header),
    `|${widths.map((w, i) => (left.has(i) ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|`,
    ...rows.map(line),
    `  "vs a resume" = ms per recovered execution ÷ the mean of ${runs[0]?.resume.count ?? 0} normal app.resume calls on the same store settings, half timed right before the run and half right after: ${runs.map((r) => `${r.label} mean ${ms(r.resume.meanMs)} (before ${ms(r.resumeMeanMs.before)}, after ${ms(r.resumeMeanMs.after)}), p50 ${ms(r.resume.p50Ms)}, p99 ${ms(r.resume.p99Ms)}`).join("; ")}`,
    "  load average: the machine's 1-minute load average when the run began and when it ended (2 cores here means 2.0 is full)",
    `  cores busy = (CPU of the workers${runs.some((r) => r.serverCpuSeconds !== undefined) ? " + CPU of the database server's processes" : ", SQLite included"}) ÷ the time to recover all: how much of the machine (${availableParallelism()} cores) one run kept busy; two instances can take about half the time only while one leaves about half the machine idle`,
  ];
  const verdicts: string[] = [];
  if (one !== undefined) {
    const met = one.failures.length === 0 && one.perSecond >= TARGET_PER_SECOND;
    verdicts.push(
      `one instance: ${one.perSecond.toFixed(1)} exec/s ${met ? "meets" : "is BELOW"} the target of ${TARGET_PER_SECOND.toFixed(1)} exec/s (10,000 in under 2 min)` +
        (one.executions === 10_000 ? `: ${one.recoverSeconds.toFixed(1)} s` : ""),
    );
  }
  if (one !== undefined && two !== undefined) {
    const fraction = two.recoverSeconds / one.recoverSeconds;
    const met = two.failures.length === 0 && fraction <= TWO_INSTANCE_TARGET;
    verdicts.push(
      `two instances: ${two.recoverSeconds.toFixed(1)} s = ${fraction.toFixed(2)} × the one-instance time (${(1 / fraction).toFixed(2)}x speed-up): ${met ? "meets" : "does NOT meet"} the target of about half (≤ ${TWO_INSTANCE_TARGET})`,
    );
  }
  lines.push(...verdicts.map((v) => `  ${v}`));
  for (const r of runs) {
    const parts = r.instances.map(
      (i) =>
        `${i.instance}: started in ${(i.startMs / 1000).toFixed(1)} s, asked for ${n(i.leases.tried)} tree leases (${n(i.leases.refused)} refused, ${n(i.leases.tried - i.leases.refused - i.recovered)} granted on trees already ended), ${i.sweeps} sweepOnce calls (${i.busySweeps.count} recovered something; p50 ${(i.busySweeps.p50Ms / 1000).toFixed(1)} s, max ${(i.busySweeps.maxMs / 1000).toFixed(1)} s), its longest stretch without running a timer ${(i.stall.ms / 1000).toFixed(1)} s (from ${i.stall.fromS.toFixed(1)} s after go, until it had taken ${n(i.stall.recoveredAfter)} trees)` +
        (Object.keys(i.problems).length > 0
          ? `; logged ${Object.entries(i.problems)
              .map(([event, k]) => `${k} × ${event}`)
              .join(", ")}`
          : "; logged no warnings"),
    );
    lines.push(`  ${r.label}: ${parts.join("; ")}`);
    for (const i of r.instances) for (const s of i.samples) lines.push(`    ${i.instance} logged: ${s}`);
    lines.push(
      r.failures.length === 0
        ? `    checks passed: all ${n(r.executions)} completed, each approved tool ran exactly once, each execution recovered by exactly one instance`
        : `    CHECKS FAILED: ${r.failures.join("; ")}`,
    );
    for (const remark of r.remarks) lines.push(`    ${remark}`);
  }
  lines.push(
    `  seeded ${n(args.executions)} executions once (${args.seedSeconds.toFixed(1)} s, over ${TENANTS} tenants, one thread each; execute until paused, then pauses.resolve only), copied per run; workers' clocks ${SHIFT_MS / 1000} s ahead; sweepOnce(24 h) in a loop`,
    `  ${args.backend.describe}`,
  );
  return {
    lines,
    failures: runs.flatMap((r) => r.failures.map((f) => `recovery (${r.label}): ${f}`)),
    figures: {
      executions: args.executions,
      seedSeconds: round(args.seedSeconds),
      runs: runs.map((r) => ({
        label: r.label,
        resume: {
          count: r.resume.count,
          meanMs: round(r.resume.meanMs),
          meanBeforeMs: round(r.resumeMeanMs.before),
          meanAfterMs: round(r.resumeMeanMs.after),
          p50Ms: round(r.resume.p50Ms),
          p99Ms: round(r.resume.p99Ms),
        },
        loadAverage: { atGo: round(r.loadAverage.atGo), atEnd: round(r.loadAverage.atEnd) },
        serverCpuSeconds: r.serverCpuSeconds === undefined ? undefined : round(r.serverCpuSeconds),
        coresBusy: round(coresBusy(r)),
        instances: r.instances.map((i) => ({
          instance: i.instance,
          recovered: i.recovered,
          toolRuns: i.toolRuns,
          sweeps: i.sweeps,
          cpuSeconds: round(i.cpuSeconds),
          startSeconds: round(i.startMs / 1000),
          longestStallSeconds: round(i.stall.ms / 1000),
          leasesTried: i.leases.tried,
          leasesRefused: i.leases.refused,
          problems: i.problems,
        })),
        completed: r.completed,
        recoverSeconds: round(r.recoverSeconds),
        perSecond: round(r.perSecond),
        msPerExecution: round(r.msPerExecution),
        vsResumeMean: round(r.msPerExecution / r.resume.meanMs),
        failures: r.failures,
      })),
      targetPerSecond: round(TARGET_PER_SECOND),
      twoInstanceTarget: TWO_INSTANCE_TARGET,
      twoInstanceFraction:
        one !== undefined && two !== undefined ? round(two.recoverSeconds / one.recoverSeconds) : undefined,
    },
  };
}

export const recoveryScenario: SoloScenario = {
  kind: "solo",
  id: "recovery",
  title: "recovery of interrupted executions",
  description:
    "executions whose answers were recorded (phase 1) before their process died are recovered by app.sweepOnce in one fresh worker process, then in two at once, from identical copies of the store.",
  backends: ["sqlite", "postgres"],
  onlyWhenNamed: true,
  async run(context: ScenarioContext): Promise<SoloResult> {
    const { progress } = context;
    const executions = context.recover;
    const backend =
      context.backend === "postgres"
        ? await postgresBackend(
            context.postgresServer ??
              (() => {
                throw new Error("--backend postgres needs a server (the runner opens one)");
              })(),
          )
        : sqliteBackend(context.dir);
    try {
      const { seeded, seconds } = await seed(backend, executions, progress);
      const copies = { one: await backend.copy("one"), two: await backend.copy("two") };
      const runs: RunResult[] = [];
      for (const [label, instances, spec] of [
        ["one instance", ["A"], copies.one],
        ["two instances", ["A", "B"], copies.two],
      ] as const) {
        const quarter = Math.max(1, Math.ceil(context.recoveryResumes / 4));
        const before = await resumeSample(backend, quarter, `before ${label}`, progress);
        progress(`  ${label}: starting ${instances.length} recover worker process(es)`);
        const run = await recoverRun({ label, instances, spec, backend, seeded, dir: context.dir, progress });
        const after = await resumeSample(backend, quarter, `after ${label}`, progress);
        runs.push({
          ...run,
          resume: summarizeLatencies("agboss", "resume", [...before, ...after]),
          resumeMeanMs: { before: mean(before), after: mean(after) },
        });
      }
      return report({ backend, executions, seedSeconds: seconds, runs });
    } finally {
      await backend.cleanup();
    }
  },
};

/** The CPU a run kept busy, in cores: workers and (where read) the database server, over its time. */
function coresBusy(run: RunResult): number {
  const workers = run.instances.reduce((sum, i) => sum + i.cpuSeconds, 0);
  return (workers + (run.serverCpuSeconds ?? 0)) / run.recoverSeconds;
}

/**
 * CPU milliseconds used so far by the processes named `postgres` on this machine (the server and its
 * backends, Linux `/proc`), or undefined where that cannot be read. Backends that exited during the
 * run are missed; the store's pools keep theirs open, so that is little.
 */
function localPostgresCpuMs(): number | undefined {
  if (process.platform !== "linux") return undefined;
  let ticks = 0;
  let found = false;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // gone since the listing
    }
    const close = stat.lastIndexOf(")");
    if (!stat.slice(stat.indexOf("(") + 1, close).startsWith("postgres")) continue;
    const fields = stat.slice(close + 2).split(" ");
    ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    found = true;
  }
  // Linux reports them in clock ticks of 1/100 s on every architecture Node runs on.
  return found ? ticks * 10 : undefined;
}
