// The parent side of the crash suite: one CrashRun per scenario and store, with its own SQLite file or
// Postgres schema, journals and gates; workers it spawns, kills, freezes and reaps; and the score.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CRASH_TENANT } from "./constants.js";
import { type CrashDatabase, openPostgres, openSqlite } from "./database.js";
import { effectPath, NO_KEY, readJournal } from "./journal.js";
import { PointMissedError, Worker } from "./processes.js";

export type StoreKind = "sqlite" | "postgres";

/** The server the Postgres runs use: `AGBOSS_POSTGRES_URL`, else the local `test` database. */
export const POSTGRES_URL = process.env.AGBOSS_POSTGRES_URL || "postgres://postgres@127.0.0.1:5432/test";
/** How far ahead of the system clock a recover process runs: past any lease (30 s) of a dead or frozen holder. */
export const RECOVER_OFFSET_MS = 60_000;
/** How long a recover process sweeps before it gives up on executions that are not final. */
export const RECOVER_LIMIT_MS = Number(process.env.CRASH_RECOVER_LIMIT_MS ?? 5_000);
/** How long any worker may live before it counts as hung. */
const WORKER_LIMIT_MS = 60_000;

const FINAL = ["completed", "failed", "cancelled"];

/** One execution a start worker left paused. */
export interface Started {
  readonly index: number;
  readonly threadId: string;
  readonly executionId: string;
  readonly pauseId: string;
}

/** A line of the ledger (tool, model, gates) or of the events journal (application events). */
export interface JournalEntry {
  readonly event: string;
  readonly pid: number;
  readonly at: number;
  readonly executionId?: string;
  readonly key?: string;
  readonly run?: string;
  readonly receipt?: string;
  readonly applied?: boolean;
  readonly gate?: string;
  readonly error?: string;
  readonly reason?: string;
  /** The channel's asks and withdrawals: which pause, and (withdrawn) why and with what ref. */
  readonly pauseId?: string;
  readonly resolution?: string;
  readonly ref?: unknown;
}

/** One scenario on one store, as the summary prints it. */
export interface Row {
  readonly scenario: string;
  readonly store: StoreKind;
  readonly executions: number;
  readonly lost: number;
  readonly beyond: number;
  readonly stuck: number;
  readonly doubleEnd: number;
  readonly crashes: number;
  /** Kills or stops that did not land at their point: the trial did not test what it claims. */
  readonly missed: number;
  readonly notes: readonly string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class CrashRun {
  readonly dir: string;
  readonly ledgerPath: string;
  readonly eventsPath: string;
  readonly effectsDir: string;
  readonly gatesDir: string;
  readonly workers: Worker[] = [];
  /** Tool runs a kill or a stop cut off while in flight (their result not stored): a rerun of each is allowed. */
  readonly excused = new Set<string>();
  /** Pause ids a worker reported answered (the answer recorded). */
  readonly answered = new Set<string>();
  readonly notes: string[] = [];
  missed = 0;
  /** Execution statuses when the recover process ended. */
  readonly afterRecovery = new Map<string, string>();
  #db: CrashDatabase | undefined;
  #dropSchema: (() => Promise<void>) | undefined;
  #workerCount = 0;

  private constructor(
    readonly kind: StoreKind,
    readonly label: string,
    readonly storeEnv: string,
    readonly schema: string | undefined,
    dir: string,
  ) {
    this.dir = dir;
    this.ledgerPath = join(dir, "ledger.jsonl");
    this.eventsPath = join(dir, "events.jsonl");
    this.effectsDir = join(dir, "effects");
    this.gatesDir = join(dir, "gates");
    mkdirSync(this.effectsDir);
    mkdirSync(this.gatesDir);
    writeFileSync(this.ledgerPath, "");
    writeFileSync(this.eventsPath, "");
  }

  /** A fresh run: a temp directory, and a new SQLite file or a new Postgres schema (created by the first worker). */
  static create(kind: StoreKind, label: string): CrashRun {
    const dir = mkdtempSync(join(tmpdir(), "agboss-crash-"));
    if (kind === "sqlite")
      return new CrashRun(kind, label, `sqlite:${join(dir, "store.sqlite")}`, undefined, dir);
    const schema = `agboss_crash_${randomBytes(6).toString("hex")}`;
    return new CrashRun(kind, label, `postgres:${schema}`, schema, dir);
  }

  get db(): CrashDatabase {
    if (this.#db === undefined) throw new Error("the store is not open yet: start executions first");
    return this.#db;
  }

  gate(name: string): string {
    return join(this.gatesDir, name);
  }

  openGate(path: string): void {
    writeFileSync(path, "open");
  }

  /** Starts a worker of this run; every worker's journals, effects and store are the run's. */
  spawn(mode: string, args: readonly string[], env: Record<string, string> = {}): Worker {
    this.#workerCount += 1;
    const name = `${mode}#${this.#workerCount}`;
    const worker = new Worker(name, [mode, ...args], {
      CRASH_STORE: this.storeEnv,
      CRASH_LEDGER: this.ledgerPath,
      CRASH_EVENTS: this.eventsPath,
      CRASH_EFFECTS: this.effectsDir,
      CRASH_LOG: join(this.dir, `log-${mode}-${this.#workerCount}.jsonl`),
      CRASH_WORKER_LIMIT_MS: String(WORKER_LIMIT_MS),
      ...env,
    });
    this.workers.push(worker);
    return worker;
  }

  /** Starts `count` executions in one worker, each until it rests paused on its refund approval. */
  async start(count: number): Promise<Started[]> {
    const worker = this.spawn("start", [String(count), `t${randomBytes(3).toString("hex")}`]);
    await worker.waitExit(WORKER_LIMIT_MS);
    const started = worker.lines.filter((l) => l.kind === "started") as unknown as (Started & {
      status: string;
    })[];
    if (worker.crashed() || started.length !== count || started.some((s) => s.status !== "paused")) {
      throw new Error(
        `the start worker did not leave ${count} paused executions (${worker.describeExit()}): ${worker.stderr.slice(0, 2000)}`,
      );
    }
    if (this.#db === undefined) {
      if (this.kind === "sqlite") this.#db = openSqlite(this.storeEnv.slice("sqlite:".length));
      else {
        const db = await openPostgres(POSTGRES_URL, this.schema as string);
        this.#db = db;
        this.#dropSchema = () => db.dropSchema();
      }
    }
    return started.sort((a, b) => a.index - b.index);
  }

  /** The ledger's entries; `torn`, when given, counts its lines a kill cut (they are skipped). */
  ledger(torn?: { count: number }): JournalEntry[] {
    return readJournal<JournalEntry>(readFileSync(this.ledgerPath, "utf8"), torn);
  }

  /** The events journal's entries; `torn` as for {@link ledger}. */
  events(torn?: { count: number }): JournalEntry[] {
    return readJournal<JournalEntry>(readFileSync(this.eventsPath, "utf8"), torn);
  }

  /** Polls (about every millisecond) until `check` holds; fails when `worker` ends first or time passes. */
  async until(
    check: () => boolean | Promise<boolean>,
    worker: Worker,
    what: string,
    timeoutMs = 20_000,
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await check()) return;
      if (worker.exited !== undefined)
        throw new PointMissedError(`${worker.name} ended (${worker.describeExit()}) before ${what}`);
      if (Date.now() > deadline)
        throw new PointMissedError(`${worker.name}: no ${what} within ${timeoutMs} ms`);
      await sleep(1);
    }
  }

  /** Until a ledger line of `worker` matches. */
  untilLedger(match: (entry: JournalEntry) => boolean, worker: Worker, what: string): Promise<void> {
    return this.until(() => this.ledger().some((e) => e.pid === worker.pid && match(e)), worker, what);
  }

  /**
   * After a kill (the process is gone) or a stop (it is frozen): every tool run it had started whose result
   * is not in the store is a run cut off in flight. A run whose receipt the store already holds was over.
   */
  async markInterrupted(worker: Worker, how: string): Promise<void> {
    const ledger = this.ledger();
    const starts = ledger.filter((e) => e.event === "tool-start" && e.pid === worker.pid);
    for (const start of starts) {
      const end = ledger.find((e) => e.event === "tool-end" && e.run === start.run);
      const stored = end?.receipt !== undefined && (await this.db.holds(end.receipt));
      if (!stored) this.excused.add(start.run as string);
      else this.notes.push(`${how} ${worker.name}: its tool run had ended and its result was stored`);
    }
  }

  /** Records a point a trial did not reach; the trial's kill still happens, but it proves less. */
  missedPoint(error: unknown): void {
    if (!(error instanceof PointMissedError)) throw error;
    this.missed += 1;
    this.notes.push(`missed: ${error.message}`);
  }

  /** A fresh process with its Clock 60 s ahead sweeps until every execution is final (or it gives up). */
  async recover(executions: readonly Started[]): Promise<Worker> {
    const file = join(this.dir, `executions-${this.#workerCount + 1}.json`);
    writeFileSync(file, JSON.stringify(executions.map((e) => e.executionId)));
    const worker = this.spawn("recover", [file, String(RECOVER_LIMIT_MS)], {
      CRASH_CLOCK_OFFSET_MS: String(RECOVER_OFFSET_MS),
    });
    await worker.waitExit(RECOVER_LIMIT_MS + 30_000);
    for (const e of executions) {
      const row = await this.db.execution(CRASH_TENANT, e.executionId);
      this.afterRecovery.set(e.executionId, row?.status ?? "missing");
    }
    return worker;
  }

  /** What one tool run left: its effect line, its end, whether it was cut off, whether its key's file is there. */
  #runOf(start: JournalEntry, ledger: readonly JournalEntry[], executionId: string) {
    const key = start.key as string | undefined;
    const effectLine = ledger.find((l) => l.event === "effect" && l.run === start.run);
    const end = ledger.find((l) => l.event === "tool-end" && l.run === start.run);
    const cutOff = this.excused.has(start.run as string);
    // Only a key no other execution's run was given: a shared key's file says nothing of this one.
    const ownKey =
      key !== undefined &&
      key !== NO_KEY &&
      !ledger.some((l) => l.event === "tool-start" && l.key === key && l.executionId !== executionId);
    const fileMade = ownKey && existsSync(effectPath(this.effectsDir, key));
    const effect = effectLine === undefined ? undefined : effectLine.applied === true;
    const said = effect === undefined ? "no effect line" : effect ? "applied" : "key applied before";
    return {
      effect,
      cutOff,
      fileMade,
      receipt: end?.receipt as string | undefined,
      describe: `${said}${fileMade ? ", key's file there" : ""}, ${end === undefined ? "no end" : "ended"}${cutOff ? ", cut off" : ""}`,
    };
  }

  /** Whether the store holds the receipt of one of `runs` (the result the execution went on with). */
  async #someReceiptStored(runs: readonly { receipt: string | undefined }[]): Promise<boolean> {
    for (const { receipt } of runs) {
      if (receipt !== undefined && (await this.db.holds(receipt))) return true;
    }
    return false;
  }

  /** Counts what the guarantee forbids, per execution and per worker. */
  async score(scenario: string, executions: readonly Started[]): Promise<Row> {
    const torn = { count: 0 };
    const ledger = this.ledger(torn);
    const events = this.events(torn);
    let lost = 0;
    let beyond = 0;
    let stuck = 0;
    let doubleEnd = 0;
    const notes = [...this.notes];
    // What a torn line said is not in the score: a failure with one may have its cause there.
    if (torn.count > 0) notes.push(`${torn.count} journal line(s) cut by a kill were skipped`);
    const unanswered: number[] = [];
    for (const e of executions) {
      const pauseStatus = await this.db.pauseStatus(CRASH_TENANT, e.pauseId);
      const row = await this.db.execution(CRASH_TENANT, e.executionId);
      const status = row?.status ?? "missing";
      const recorded = this.answered.has(e.pauseId) || pauseStatus === "resolved" || pauseStatus === "taken";
      const starts = ledger.filter((l) => l.event === "tool-start" && l.executionId === e.executionId);
      const keys = new Set(starts.map((s) => s.key));
      const runs = starts.map((start) => this.#runOf(start, ledger, e.executionId));
      const excused = runs.filter((r) => r.cutOff).length;
      const logged = runs.some((r) => r.effect === true);
      // A run cut off after the payment API applied its key and before it logged that leaves the key's
      // file and no effect line, and the run after it finds the key applied (its line says false). Only
      // then does the file count: the key is this execution's alone, and a run without a key (one file
      // for every such run) never counts.
      const unlogged = runs.some((r) => r.cutOff && r.effect === undefined && r.fileMade);
      const applied = logged || unlogged;
      // The tool's result as the execution used it: some run's receipt is in the store.
      const resultStored = status === "completed" && applied ? await this.#someReceiptStored(runs) : false;
      const runList = runs.map((r) => r.describe).join("; ");
      const ends = events.filter(
        (l) => (l.event === "finish" || l.event === "error") && l.executionId === e.executionId,
      );
      const isLost = recorded && !(status === "completed" && applied && resultStored);
      const extra = Math.max(0, starts.length - 1 - excused) + Math.max(0, keys.size - 1);
      const recoveredStatus = this.afterRecovery.get(e.executionId) ?? status;
      const isStuck = recorded && !FINAL.includes(recoveredStatus);
      const isDouble = ends.length > 1;
      if (isLost) lost += 1;
      beyond += extra;
      if (isStuck) stuck += 1;
      if (isDouble) doubleEnd += 1;
      if (!recorded && !isStuck && !isDouble && extra === 0 && starts.length === 0) {
        unanswered.push(e.index);
        continue;
      }
      if (isLost || extra > 0 || isStuck || isDouble || !recorded) {
        const endList = ends.map((x) => (x.event === "error" ? `error(${x.error})` : x.event)).join(", ");
        notes.push(
          `execution #${e.index}: ${recorded ? "answered" : "answer not recorded"}; pause ${pauseStatus}; ` +
            `after recovery ${recoveredStatus}, finally ${status}${row?.error === undefined ? "" : ` (${row.error})`}; ` +
            `tool runs ${starts.length} (${excused} cut off in flight), keys ${keys.size}, effect ${applied ? "applied" : "not applied"}` +
            `${status === "completed" && applied && !resultStored ? ", no run's receipt stored" : ""} [${runList}]; ` +
            `end events [${endList}]`,
        );
      }
    }
    if (unanswered.length > 0)
      notes.push(
        `${unanswered.length} execution(s) never answered (no answer recorded; they rest paused): #${unanswered.join(", #")}`,
      );
    const crashed = this.workers.filter((w) => w.crashed());
    for (const w of crashed) {
      const how = w.exited?.signal ?? `exit code ${w.exited?.code}`;
      notes.push(
        `crash: ${w.name} ${w.hung ? "hung: killed after its time" : `${how}: ${firstLine(w.stderr)}`}`,
      );
    }
    return {
      scenario,
      store: this.kind,
      executions: executions.length,
      lost,
      beyond,
      stuck,
      doubleEnd,
      crashes: crashed.length,
      missed: this.missed,
      notes,
    };
  }

  /** Kills what still runs, closes the parent's connection, drops the schema, removes the directory. */
  async dispose(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.kill9()));
    try {
      if (this.#dropSchema !== undefined) await this.#dropSchema();
      else if (this.schema !== undefined) {
        // A worker may have created the schema before the parent connected (a start that failed).
        const db = await openPostgres(POSTGRES_URL, this.schema).catch(() => undefined);
        await db?.dropSchema().finally(() => db.close());
      }
    } finally {
      await this.#db?.close();
      if (process.env.CRASH_KEEP === "1")
        console.log(`crash run ${this.label} (${this.kind}) kept in ${this.dir}`);
      else if (existsSync(this.dir)) rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

/** The error a worker printed: from its first line that names one, a few lines. */
function firstLine(text: string): string {
  const lines = text.split("\n");
  const at = lines.findIndex((l) => l.includes("CRASH-WORKER-UNCAUGHT") || l.includes("Error"));
  return at < 0
    ? ""
    : lines
        .slice(at, at + 3)
        .join(" | ")
        .slice(0, 400);
}
