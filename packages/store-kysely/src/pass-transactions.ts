import { LeaseLostError, StoreUnavailableError } from "@agboss/core";
import type { Fence } from "@agboss/core/store";
import { CompiledQuery, type Kysely } from "kysely";
import type { FaultRetry } from "./fault-retry.js";
import { fenceAssertionFailed } from "./fenced-statement.js";
import { runCompiledOn } from "./held-connections.js";
import type { AgbossDatabase } from "./schema/agboss-database.js";
import { commitInFlight, heldRefused, notSent } from "./store-dialect-capabilities.js";
import { StoreFault } from "./store-faults.js";
import type { WriteGate } from "./write-gate.js";

type Work<T> = (trx: Kysely<AgbossDatabase>) => Promise<T>;

/**
 * How a write that ends a pass transaction may run again after its COMMIT was lost in flight:
 * `statement` (idempotent) runs again; `once` and `transaction` fail with the outcome unknown.
 */
export type Closing = "statement" | "once" | "transaction";

interface PassUnit {
  readonly work: Work<unknown>;
  /** Undefined for a write that resolves once applied; else the kind of write that commits the transaction. */
  readonly closing: Closing | undefined;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** Set when a COMMIT carrying it lost its connection: it may have landed, whatever happens next. */
  maybeCommitted?: boolean;
  /** Its caller was told done before it was issued (`WriteOptions.toldDone`): lost if never committed. */
  readonly toldDone?: boolean;
}

/** A write that resolved once applied and is not committed yet. */
interface Carried {
  readonly work: Work<unknown>;
  readonly ended: () => void;
}

/** One holder's writes (one fence) that share a transaction. */
interface Pass {
  readonly fence: Fence;
  readonly queue: PassUnit[];
  /** What resolved and is not committed: a new transaction of the pass runs it again first, in order. */
  readonly carried: Carried[];
  /** Set by {@link PassTransactions.settle}: commit as soon as the queue is empty, without lingering. */
  hurry: boolean;
  /** While the transaction lingers for the pass's next write: ends the wait (a write came, or a hurry). */
  wake: (() => void) | undefined;
  /** Whether its COMMIT is in flight: a write that waits for its commit can no longer join it. */
  committing: boolean;
  /** Settles once the pass has nothing left to run or commit. */
  drained: Promise<void>;
}

/** What a {@link PassTransactions} is built from. @internal */
export interface PassTransactionsConfig {
  readonly db: Kysely<AgbossDatabase>;
  readonly begin: CompiledQuery;
  readonly retry: FaultRetry;
  readonly gate: WriteGate;
  /** Runs one transaction attempt on `connection` (the caller notes its fence checks there). */
  readonly holding: <T>(connection: Kysely<AgbossDatabase>, work: () => Promise<T>) => Promise<T>;
  /** Called as each transaction begins on `connection`: fences checked in an earlier one are checked again. */
  readonly began: (connection: Kysely<AgbossDatabase>) => void;
  /** Called when writes under `fence` resolved and will not be committed: its later writes are refused. */
  readonly lost: (fence: Fence, error: unknown) => void;
  /**
   * The dialect's `commitWithNextStatement`, if it has one: sent before a closing write that is one
   * idempotent statement, so that statement carries the transaction's COMMIT.
   */
  readonly commitWithNext?: CompiledQuery | undefined;
}

/** Most writes one pass transaction carries before it commits, so a long pass still commits now and then. */
const MAX_PASS_WRITES = 64;
/**
 * How long a pass transaction waits for the pass's next write once its queue ran dry, before it commits
 * on its own: long enough for the reads a pass makes before its closing write (the open pauses and the
 * audit trail, when it comes to rest), so that write carries the commit; short beside a model's turn.
 */
const LINGER_MS = 4;
const COMMIT = CompiledQuery.raw("commit");
const ROLLBACK = CompiledQuery.raw("rollback");

/** A write that had resolved failed for good when run again: the pass's uncommitted writes are lost. */
class PassLost extends Error {
  constructor(readonly error: unknown) {
    super("a write of the pass failed when run again", { cause: error });
  }
}

/**
 * Transactions per holder of a lease, for a database whose transactions run side by side on a pool
 * (Postgres), where each commit is a WAL flush. A pass's checkpoint writes under its fence resolve as
 * soon as they ran in an open transaction of their own fence, before it commits, so the graph's next
 * write joins it (see `WriteTransactions.applied`); the transaction commits once {@link LINGER_MS}
 * passed with no new write of the pass, or when a write that waits for its commit joins it (a
 * fenced write of the runtime under the same fence: see {@link join}), or when a checkpoint read or a
 * write that joins no pass asks ({@link settle}; the other tables never hold these writes). So the
 * store never shows a state without writes that resolved before the read or the write asking for it:
 * to everyone else the pass's writes look committed as they resolved.
 *
 * The writes a transaction carries are idempotent single statements (an upsert, an insert that keeps
 * what is stored), so when it meets a transient fault, even a connection lost while COMMIT was in
 * flight, they run again in order in a new transaction, under the same fence check, and their callers
 * never see it. They are lost only when the store stays unavailable through every attempt, or when
 * the fence no longer holds the lease: then every later write under the fence is refused. @internal
 */
export class PassTransactions {
  readonly #config: PassTransactionsConfig;
  readonly #passes = new Map<string, Pass>();
  /** The ends of writes that resolved and are not committed yet (see {@link settle}). */
  readonly #unsettled = new Set<Promise<void>>();

  constructor(config: PassTransactionsConfig) {
    this.#config = config;
  }

  /**
   * Runs `work`, an idempotent write under `fence`, in the fence's open transaction (opened for it if
   * there is none), and resolves once it ran there. `drained` is called with a new pass's end, for the
   * store's `close()` to wait on.
   */
  applied<T>(
    fence: Fence,
    work: Work<T>,
    drained: (end: Promise<void>) => void,
    toldDone = false,
  ): Promise<T> {
    const open = this.#passes.get(fence.key);
    if (open !== undefined && open.fence.epoch !== fence.epoch) {
      // A new holder in this process: the old one's writes commit first. What `close()` waits for covers
      // the pass this write opens then (the first reaction to `open.drained` opens it, the second reads it).
      open.hurry = true;
      open.wake?.();
      let opened: Promise<void> | undefined;
      const later = open.drained.then(() =>
        this.applied(
          fence,
          work,
          (end) => {
            opened = end;
            drained(end);
          },
          toldDone,
        ),
      );
      drained(open.drained.then(() => opened));
      return later;
    }
    return new Promise<T>((resolve, reject) => {
      const unit: PassUnit = {
        work,
        closing: undefined,
        resolve: resolve as (value: unknown) => void,
        reject,
        toldDone,
      };
      if (open === undefined) drained(this.#open(fence, unit));
      else {
        open.queue.push(unit);
        open.wake?.();
      }
    });
  }

  /**
   * Runs `work`, a write under `fence` that resolves once committed, as the last write of the fence's
   * open transaction, which then commits; undefined when the fence has none, or nothing in it waits to
   * be committed (run it on its own, after {@link settle}).
   */
  join<T>(fence: Fence, closing: Closing, work: Work<T>): Promise<T> | undefined {
    const open = this.#passes.get(fence.key);
    if (open === undefined || open.fence.epoch !== fence.epoch) return undefined;
    // Nothing of the pass waits to be committed (on its own the write needs no BEGIN and COMMIT around
    // it), or what does is being committed (the write runs once that is done: see settle).
    if (open.committing || (open.queue.length === 0 && open.carried.length === 0)) return undefined;
    return new Promise<T>((resolve, reject) => {
      open.queue.push({ work, closing, resolve: resolve as (value: unknown) => void, reject });
      open.wake?.();
    });
  }

  /**
   * Settles once every write that has resolved so far is committed (or known lost), hurrying their
   * transactions to commit; undefined, at once, when there is none. Every read and every write that
   * does not join a pass waits for it, so it sees what the writes before it resolved with.
   */
  settle(): Promise<void> | undefined {
    if (this.#unsettled.size === 0) return undefined;
    for (const pass of this.#passes.values()) {
      pass.hurry = true;
      pass.wake?.();
    }
    return Promise.allSettled([...this.#unsettled]).then(() => undefined);
  }

  /**
   * Whether a pass is open under the lease `key`, of any epoch: its writes (or a newer holder's, queued
   * behind it) are not all committed yet.
   */
  hasOpen(key: string): boolean {
    return this.#passes.has(key);
  }

  #open(fence: Fence, first: PassUnit): Promise<void> {
    const pass: Pass = {
      fence,
      queue: [first],
      carried: [],
      hurry: false,
      wake: undefined,
      committing: false,
      drained: Promise.resolve(),
    };
    this.#passes.set(fence.key, pass);
    pass.drained = this.#config.gate(() => this.#drain(pass));
    return pass.drained;
  }

  async #drain(pass: Pass): Promise<void> {
    const { db, retry, holding } = this.#config;
    try {
      while (pass.queue.length > 0 || pass.carried.length > 0) {
        await retry
          .write(() =>
            db
              .connection()
              .execute((connection) => holding(connection, () => this.#attempt(connection, pass))),
          )
          .catch((error: unknown) => this.#fail(pass, error));
      }
    } finally {
      // In the same turn as the empty check: a write issued from now on opens a new pass.
      if (this.#passes.get(pass.fence.key) === pass) this.#passes.delete(pass.fence.key);
    }
  }

  /**
   * Transactions on `connection` until one commits or the pass is empty; throws a transient fault. Each
   * commit ends the attempt, so every transaction of a long pass gets the retries of its own.
   */
  async #attempt(connection: Kysely<AgbossDatabase>, pass: Pass): Promise<void> {
    while (pass.queue.length > 0 || pass.carried.length > 0) {
      await runCompiledOn(connection, this.#config.begin);
      this.#config.began(connection);
      if (await this.#transaction(connection, pass)) return;
    }
  }

  /**
   * One begun transaction: the carried writes again, then queued ones, then COMMIT. True once committed;
   * false when it rolled back because one queued write failed (rejected alone: the others run again).
   */
  async #transaction(connection: Kysely<AgbossDatabase>, pass: Pass): Promise<boolean> {
    const { retry } = this.#config;
    const rollback = () => runCompiledOn(connection, ROLLBACK).catch(() => undefined);
    for (const write of pass.carried) {
      try {
        await write.work(connection);
      } catch (error) {
        await rollback();
        if (retry.faultOf(error) !== undefined) throw error;
        throw passLost(pass, error);
      }
    }
    let lingered = false;
    for (;;) {
      let unit = pass.queue[0];
      if (unit === undefined && !lingered && !pass.hurry && pass.carried.length < MAX_PASS_WRITES) {
        // The graph's next write comes behind this one's resolution: wait a little for it.
        lingered = true;
        await lingering(pass);
        unit = pass.queue[0];
      }
      if (unit === undefined || pass.carried.length >= MAX_PASS_WRITES) break;
      // A closing write that is one statement carries the COMMIT, where the dialect can: one that is not
      // safe to run twice (`once`) then fails with the outcome unknown if the connection is lost, as it
      // does when it runs alone, in autocommit.
      const commitWith =
        unit.closing === "statement" || unit.closing === "once" ? this.#config.commitWithNext : undefined;
      let result: unknown;
      try {
        if (commitWith !== undefined) {
          pass.committing = true;
          await runCompiledOn(connection, commitWith);
        }
        result = await unit.work(connection);
      } catch (error) {
        pass.committing = false;
        await rollback();
        const fault = retry.faultOf(error);
        // The COMMIT went with it: it may have landed. An idempotent write runs again all the same; one
        // that is not safe to run twice fails, its outcome unknown.
        if (commitWith !== undefined && fault === StoreFault.ConnectionLost && commitInFlight(error)) {
          unit.maybeCommitted = true;
          if (unit.closing === "once") {
            pass.queue.shift();
            unit.reject(unknownOutcome(error));
          }
        }
        // A fault fails the transaction, not the write: it stays first in the queue and runs again.
        if (fault !== undefined) throw error;
        // A resolved write held back and sent in front of this one was refused: the pass is lost at it.
        if (heldRefused(error)) throw passLost(pass, error);
        pass.queue.shift();
        unit.reject(settledError(unit, error));
        return false;
      }
      // With the COMMIT carried, the dialect answers the one sent next without a round trip.
      if (unit.closing !== undefined) return this.#commit(connection, pass, unit, result);
      pass.queue.shift();
      this.#carry(pass, unit.work);
      unit.resolve(result);
      lingered = false;
    }
    return this.#commit(connection, pass, undefined, undefined);
  }

  #carry(pass: Pass, work: Work<unknown>): void {
    let ended!: () => void;
    const end = new Promise<void>((resolve) => {
      ended = resolve;
    });
    this.#unsettled.add(end);
    void end.then(() => this.#unsettled.delete(end));
    pass.carried.push({ work, ended });
  }

  /** Commits; on a fault throws it (the carried writes, and a closing write that may, run again). */
  async #commit(
    connection: Kysely<AgbossDatabase>,
    pass: Pass,
    closing: PassUnit | undefined,
    result: unknown,
  ): Promise<boolean> {
    pass.committing = true;
    try {
      await runCompiledOn(connection, COMMIT);
    } catch (error) {
      pass.committing = false;
      await runCompiledOn(connection, ROLLBACK).catch(() => undefined);
      const fault = this.#config.retry.faultOf(error);
      if (closing !== undefined && fault === StoreFault.ConnectionLost && !notSent(error)) {
        // It may have committed: a write that is not safe to run twice is not. The carried writes are.
        closing.maybeCommitted = true;
        if (closing.closing !== "statement") {
          pass.queue.shift();
          closing.reject(unknownOutcome(error));
        }
      }
      if (fault !== undefined) throw error;
      // Refused for good: the closing write fails alone, the carried ones run again without it; unless
      // it was a carried write, held back and sent with the commit, that the server refused.
      if (closing === undefined || heldRefused(error)) throw passLost(pass, error);
      pass.queue.shift();
      closing.reject(settledError(closing, error));
      return false;
    }
    pass.committing = false;
    if (closing !== undefined) pass.queue.shift();
    for (const write of pass.carried.splice(0)) write.ended();
    pass.hurry = false;
    closing?.resolve(result);
    return true;
  }

  /** The pass could not commit (attempts spent, or a carried write failed): its writes are lost. */
  #fail(pass: Pass, thrown: unknown): void {
    const error = thrown instanceof PassLost ? thrown.error : thrown;
    // Lost where its holder went on as if written: what resolved, and what it was told done before.
    if (pass.carried.length > 0 || pass.queue.some((unit) => unit.toldDone === true)) {
      this.#config.lost(pass.fence, error);
    }
    for (const write of pass.carried.splice(0)) write.ended();
    for (const unit of pass.queue.splice(0)) unit.reject(settledError(unit, error));
  }
}

/** Settles once a write joins `pass`'s queue, something hurries it, or {@link LINGER_MS} passed. */
function lingering(pass: Pass): Promise<void> {
  return new Promise((resolve) => {
    const woken = () => {
      clearTimeout(timer);
      pass.wake = undefined;
      resolve();
    };
    const timer = setTimeout(woken, LINGER_MS);
    pass.wake = woken;
  });
}

/**
 * The pass lost at `error`, a write of it that failed for good: as {@link LeaseLostError} when that write
 * found its fence lost (a write sent without its answer being read: see `runFenced`'s `asserted`).
 */
function passLost(pass: Pass, error: unknown): PassLost {
  return new PassLost(fenceAssertionFailed(error) ? new LeaseLostError(pass.fence, { cause: error }) : error);
}

/** What `unit` fails with: `error`, or "the outcome is unknown" once a COMMIT carrying it was lost. */
function settledError(unit: PassUnit, error: unknown): unknown {
  return unit.maybeCommitted === true ? unknownOutcome(error) : error;
}

function unknownOutcome(error: unknown): StoreUnavailableError {
  return new StoreUnavailableError(
    `The store lost its connection to the database while committing a write (${
      error instanceof Error ? error.message : String(error)
    }). The outcome is unknown: the write may or may not have been committed, so it was not run again. ` +
      "Recovery settles it: the recovery sweep continues the execution from whatever the store holds; read " +
      "the data back before acting on it again.",
    { cause: error },
  );
}
