import { closeSync, openSync, writeSync } from "node:fs";
import {
  type AnyClass,
  type App,
  type Clock,
  type ClockTimer,
  type CreateAppOptions,
  createApp,
  ExecutionContext,
  type StoreFactory,
  SystemClock,
} from "@agboss/core";
import { postgresStore } from "@agboss/store-postgres";
import { sqliteStore } from "@agboss/store-sqlite";
import { RefundLedger } from "./approval-app.js";

// What `recovery`'s parent (src/scenarios/recovery.ts) and its worker processes (src/recover-worker.ts)
// share: the clock, how an app is created without its own 30-second sweep, the tool-run ledger, the
// store a process opens, and the messages between them.

/**
 * The wall clock moved forward by `shiftMs`, whose timers are dropped while {@link muted}: the bench
 * creates every app with it muted, which drops the one timer `createApp` sets, the recovery sweep's
 * first tick 30 s later. The seeding app then never recovers the answers it records, and each worker
 * runs exactly one sweep loop, the bench's own `sweepOnce` calls.
 */
export class BenchClock implements Clock {
  readonly #system = new SystemClock();
  muted = false;
  /** Timers dropped while muted. */
  dropped = 0;

  constructor(readonly shiftMs: number) {}

  now(): number {
    return Date.now() + this.shiftMs;
  }

  setTimer(delayMs: number, callback: () => void): ClockTimer {
    if (this.muted) {
      this.dropped += 1;
      return { cancel: () => {} };
    }
    return this.#system.setTimer(delayMs, callback);
  }
}

/** `createApp` with `clock` muted while it runs (see {@link BenchClock}); throws unless exactly one timer was dropped. */
export async function createAppWithoutSweep(
  application: AnyClass,
  options: Omit<CreateAppOptions, "clock">,
  clock: BenchClock,
): Promise<App> {
  const before = clock.dropped;
  clock.muted = true;
  let app: App;
  try {
    app = await createApp(application, { ...options, clock });
  } finally {
    clock.muted = false;
  }
  if (clock.dropped - before !== 1) {
    await app.close();
    throw new Error(
      `createApp set ${clock.dropped - before} timers, the bench expects exactly one (the sweep's first tick); see bench/src/recovery-support.ts`,
    );
  }
  return app;
}

/** Where a recovery process finds the store: a SQLite file, or a schema on a Postgres server. */
export type RecoveryStoreSpec =
  | { readonly kind: "sqlite"; readonly path: string }
  | { readonly kind: "postgres"; readonly url: string; readonly schema: string };

/** The store factory of `spec` (SQLite: `synchronous=FULL`, the store's default). */
export function storeOf(spec: RecoveryStoreSpec): StoreFactory {
  return spec.kind === "sqlite"
    ? sqliteStore({ path: spec.path })
    : postgresStore({ connectionString: spec.url, schema: spec.schema });
}

/**
 * The refund tool's ledger in a recovering process: one line per tool run, appended to a file every
 * process shares (`O_APPEND`, one `write` per line, so lines of two processes never interleave):
 * the step's idempotency key, the root execution and the instance that ran it.
 */
export class FileRefundLedger extends RefundLedger {
  readonly #fd: number;
  readonly #context = new ExecutionContext();

  constructor(
    path: string,
    private readonly instance: string,
  ) {
    super();
    this.#fd = openSync(path, "a");
  }

  override record(): void {
    const key = this.#context.step?.idempotencyKey ?? "(no idempotency key)";
    const root = `${this.#context.tenant.tenantId}/${this.#context.rootExecutionId}`;
    writeSync(this.#fd, `${key}\t${root}\t${this.instance}\n`);
  }

  close(): void {
    closeSync(this.#fd);
  }
}

/** How the parent starts a worker (`argv[2]`, JSON). */
export interface WorkerConfig {
  /** `A`, `B`: names the instance in the ledgers and progress lines. */
  readonly instance: string;
  readonly store: RecoveryStoreSpec;
  /** How far the worker's clock runs ahead of the wall clock (past the answers' 1-s grace). */
  readonly shiftMs: number;
  /** `app.sweepOnce(retentionMs)`. */
  readonly retentionMs: number;
  /** The shared tool-run ledger. */
  readonly ledgerPath: string;
  /** This instance's own list of the trees it started recovering (`sweep.recovering`), one per line. */
  readonly recoveredPath: string;
}

/** Parent → worker. */
export type ToWorker = { readonly type: "go" } | { readonly type: "stop" };

/** Worker → parent. */
export type FromWorker =
  | { readonly type: "ready"; readonly instance: string; readonly openMs: number }
  | {
      readonly type: "done";
      readonly instance: string;
      /** `sweep.recovering` log entries: trees this instance took and carried on. */
      readonly recovered: number;
      /** Tree leases the sweep asked for, and how many were refused (held by another holder). */
      readonly leases: { readonly tried: number; readonly refused: number };
      /** `sweepOnce` calls returned. */
      readonly sweeps: number;
      /** Warnings and errors the app logged, by event. */
      readonly problems: Readonly<Record<string, number>>;
      /** `Date.now()` when the first `sweepOnce` was called. */
      readonly firstSweepAt: number;
      /** Wall time of each `sweepOnce` call that recovered at least one tree, ms. */
      readonly busySweepsMs: readonly number[];
      /** The first few warning/error messages. */
      readonly samples: readonly string[];
      /** CPU time the process used from `go` until its loop ended. */
      readonly cpuMs: number;
      /** The longest time without a timer: how long, when it began (s after go), trees taken by its end. */
      readonly stall: { readonly ms: number; readonly fromS: number; readonly recoveredAfter: number };
    }
  | { readonly type: "failed"; readonly instance: string; readonly message: string };
