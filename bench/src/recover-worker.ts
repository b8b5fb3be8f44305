import { closeSync, openSync, writeSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { type App, type LogEntry, type Logger, LogLevel } from "@agboss/core";
import { ApprovalApplication, RefundLedger } from "./approval-app.js";
import {
  BenchClock,
  createAppWithoutSweep,
  FileRefundLedger,
  type FromWorker,
  storeOf,
  type ToWorker,
  type WorkerConfig,
} from "./recovery-support.js";

// One recovering instance of `recovery` (src/scenarios/recovery.ts), a process of its own: it opens the
// app over the interrupted executions' store with its clock a little ahead, says it is ready, and on the
// parent's `go` calls `app.sweepOnce` in a loop until the parent says `stop`. It never reads the
// database itself; the parent watches the executions complete (and counts the lines of its list of
// recovered trees for its progress lines: this process may not get to send anything while it sweeps).
//
//   node --conditions=@agboss/source --import tsx src/recover-worker.ts '<WorkerConfig as JSON>'

/** How long the loop waits after a `sweepOnce` that found nothing to recover. */
const IDLE_MS = 100;
/** How many warning/error messages it keeps for the report. */
const SAMPLES = 5;

const config = JSON.parse(process.argv[2] ?? "") as WorkerConfig;
const { instance } = config;

function send(message: FromWorker): Promise<void> {
  return new Promise((resolve) => {
    if (process.send === undefined || !process.connected) return resolve();
    process.send(message, undefined, {}, () => resolve());
  });
}

let leaving = false;

/** Sends the last message, then closes the channel so the process can exit. */
async function leave(message: FromWorker): Promise<void> {
  leaving = true;
  await send(message);
  if (process.connected) process.disconnect();
}

/** Counts what the app logs: each `sweep.recovering` is a tree this instance took and carries on. */
class CountingLogger implements Logger {
  recovered = 0;
  readonly problems: Record<string, number> = {};
  readonly samples: string[] = [];
  readonly #fd: number;

  constructor(path: string) {
    this.#fd = openSync(path, "a");
  }

  log(entry: LogEntry): void {
    if (entry.event === "sweep.recovering") {
      this.recovered += 1;
      writeSync(this.#fd, `${String(entry.fields.tenantId)}/${String(entry.fields.executionId)}\n`);
      return;
    }
    if (entry.level !== LogLevel.Warn && entry.level !== LogLevel.Error) return;
    this.problems[entry.event] = (this.problems[entry.event] ?? 0) + 1;
    if (this.samples.length < SAMPLES) this.samples.push(`${entry.event}: ${entry.message}`);
  }

  close(): void {
    closeSync(this.#fd);
  }
}

async function main(): Promise<void> {
  const began = performance.now();
  const logger = new CountingLogger(config.recoveredPath);
  const ledger = new FileRefundLedger(config.ledgerPath, instance);
  const clock = new BenchClock(config.shiftMs);
  const app: App = await createAppWithoutSweep(
    ApprovalApplication,
    { store: storeOf(config.store), logger, providers: [{ provide: RefundLedger, useValue: ledger }] },
    clock,
  );
  // Lease attempts: the sweep takes a tree's lease before anything else, so a refusal is a tree another
  // instance holds, and a granted lease on a tree another instance already ended costs a few writes too.
  const leases = { tried: 0, refused: 0 };
  const repository = app.store.leases;
  const acquire = repository.acquire.bind(repository);
  repository.acquire = async (args) => {
    leases.tried += 1;
    const lease = await acquire(args);
    if (lease === undefined) leases.refused += 1;
    return lease;
  };
  let stopping = false;
  let go: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    go = resolve;
  });
  process.on("message", (message: ToWorker) => {
    if (message.type === "go") go();
    if (message.type === "stop") {
      stopping = true;
      go();
    }
  });
  // The parent is gone: nothing will read what this process does.
  process.on("disconnect", () => {
    if (!leaving) process.exit(3);
  });
  await send({ type: "ready", instance, openMs: performance.now() - began });
  await started;

  let sweeps = 0;
  const busySweepsMs: number[] = [];
  const cpuAtGo = process.cpuUsage();
  const firstSweepAt = Date.now();
  // The longest time the event loop went without running a timer (a 20-ms interval's gaps), when it
  // began (s after go), and how many trees this instance had taken by its end: while a sweep's store
  // calls never leave the thread (SQLite), its timers and I/O wait for it.
  let stall = { ms: 0, fromS: 0, recoveredAfter: 0 };
  let lastTick = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    if (now - lastTick > stall.ms) {
      stall = {
        ms: now - lastTick,
        fromS: Math.max(0, (Date.now() - firstSweepAt - (now - lastTick)) / 1000),
        recoveredAfter: logger.recovered,
      };
    }
    lastTick = now;
  }, 20);
  while (!stopping) {
    const before = logger.recovered;
    const t0 = performance.now();
    await app.sweepOnce(config.retentionMs);
    sweeps += 1;
    if (logger.recovered > before) busySweepsMs.push(performance.now() - t0);
    else if (!stopping) await sleep(IDLE_MS);
  }
  clearInterval(ticker);
  await app.close();
  ledger.close();
  logger.close();
  const cpu = process.cpuUsage(cpuAtGo);
  await leave({
    type: "done",
    instance,
    firstSweepAt,
    busySweepsMs,
    samples: logger.samples,
    cpuMs: (cpu.user + cpu.system) / 1000,
    stall,
    recovered: logger.recovered,
    leases,
    sweeps,
    problems: logger.problems,
  });
}

main().catch(async (error: unknown) => {
  process.exitCode = 1;
  await leave({
    type: "failed",
    instance,
    message: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
});
