import { AsyncLocalStorage } from "node:async_hooks";
import { LeaseLostError, StoreUnavailableError } from "@agboss/core";
import type { Fence } from "@agboss/core/store";
import { CompiledQuery, type Kysely } from "kysely";
import { CommitTurns } from "./commit-turns.js";
import { CommitFailure, FaultRetry } from "./fault-retry.js";
import { hold, letGo, runCompiledOn, type SyncStatements } from "./held-connections.js";
import { type Closing, PassTransactions } from "./pass-transactions.js";
import type { AgbossDatabase } from "./schema/agboss-database.js";
import type { StoreDialectCapabilities } from "./store-dialect-capabilities.js";
import { openWriteGate, type WriteGate } from "./write-gate.js";

/** What the repositories share: one database, its dialect's capabilities and its write gate. @internal */
export interface StoreDatabase {
  /**
   * Where the repositories read (each statement alone, outside any transaction) and build their
   * queries. In a {@link KyselyStore} every statement run on it is retried after a transient fault.
   */
  readonly db: Kysely<AgbossDatabase>;
  readonly capabilities: StoreDialectCapabilities;
  readonly writeGate?: WriteGate | undefined;
  /** Runs the store's write transactions; without it each runs on its own. */
  readonly transactions?: WriteTransactions | undefined;
  /**
   * Runs a statement at once where the driver answers synchronously (better-sqlite3): a write
   * transaction's statements then skip kysely's asynchronous driver on the connection it holds.
   */
  readonly syncStatements?: SyncStatements | undefined;
  /**
   * Whether the connection the write transactions run on has a transaction open (better-sqlite3's
   * `inTransaction`). With it, a unit of one write statement (see {@link WriteOptions}) shares a
   * transaction without a savepoint of its own.
   */
  readonly inTransaction?: (() => boolean) | undefined;
}

type Work<T> = (trx: Kysely<AgbossDatabase>) => Promise<T>;

/** What a write tells the store about itself. */
export interface WriteOptions {
  /**
   * Its work runs at most one statement that changes the database, and nothing after it that can
   * fail (reads and checks come first). Where commits are grouped and the store can tell whether a
   * transaction is still open, it then shares a transaction without a savepoint: SQLite undoes a
   * failing statement by itself and keeps the transaction, unless the failure ended it (an I/O error,
   * a full disk), which then fails every unit the transaction carries, as a failed savepoint would.
   */
  readonly oneWrite?: boolean;
  /**
   * Its work runs reads and idempotent writes only (running one twice leaves what running it once
   * leaves), and what any first few of its writes leave is a state its caller may leave behind (an
   * execution's record saved and its lease not yet released, say). Where commits are grouped and the
   * store can tell whether a transaction is still open, it then shares a transaction without a
   * savepoint, as a {@link oneWrite} unit does: a failing statement undoes itself, and the unit
   * rejects while the writes before it stay in the commit.
   */
  readonly idempotent?: boolean;
  /**
   * Its caller was told the write was done before it was issued: a checkpoint write the checkpointer
   * held back (see {@link WriteTransactions.holdBackFor}). Given to {@link WriteTransactions.applied}: if
   * it is finally not committed, whatever the reason (a transaction that never began, say), its fence
   * is lost as if it had resolved (see {@link WriteTransactions.refuseAfterLostCommit}).
   */
  readonly toldDone?: boolean;
}

/** Whether a unit given `options` may share a grouped transaction without a savepoint of its own. */
function undoesItself(options: WriteOptions | undefined): boolean {
  return options?.oneWrite === true || options?.idempotent === true;
}

interface QueuedWork {
  readonly work: Work<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** Set for a unit run by {@link WriteTransactions.applied}. */
  readonly applied?: AppliedUnit | undefined;
  /** See {@link WriteOptions.oneWrite} and {@link WriteOptions.idempotent}. */
  readonly undoesItself?: boolean | undefined;
}

/** The fences an open write transaction found current (lease key → epoch), and how often it forgot them. */
interface CheckedFences {
  generation: number;
  readonly fences: Map<string, number>;
}

/** A unit that settles once applied (see {@link WriteTransactions.applied}) and what follows it. */
interface AppliedUnit {
  /** Whose later writes learn that its transaction did not commit. */
  readonly fence: Fence;
  /** Whether it has been resolved, its writes applied but perhaps not yet committed. */
  resolved: boolean;
  /** Ends the unit for {@link WriteTransactions.idle}: committed, rolled back, or rejected. */
  readonly ended: () => void;
  /** Its caller was told done before it was issued (see `WriteOptions.toldDone`). */
  readonly toldDone: boolean;
}

/** Most units one commit carries, so a steady stream of writes still commits now and then. */
const MAX_GROUP = 64;
/**
 * Fences remembered with a lost commit beyond which the oldest are forgotten, once they are older than
 * {@link LOST_COMMIT_KEPT_MS}: a loss is never forgotten sooner, however many other leases lose theirs
 * meanwhile (a database outage in a busy process).
 */
const MAX_LOST_COMMITS = 1024;
/**
 * How long a lost commit is remembered at least: four lease lifetimes of the runtime's (30 s). Its holder
 * learns of it at its next write or renewal, its lease lapses when renewals are refused, and another
 * holder's grant makes its fence stale in the database itself.
 */
const LOST_COMMIT_KEPT_MS = 120_000;
const SAVEPOINT = CompiledQuery.raw("savepoint agboss_unit");
const RELEASE = CompiledQuery.raw("release agboss_unit");
const ROLLBACK_TO = CompiledQuery.raw("rollback to agboss_unit");
const COMMIT = CompiledQuery.raw("commit");
const ROLLBACK = CompiledQuery.raw("rollback");

/**
 * Runs a store's write transactions. With {@link StoreDialectCapabilities.groupCommit}, units of work
 * that queue while one runs share its transaction and its commit, each under a savepoint: a unit that
 * throws rolls back to its savepoint and rejects alone, and every other unit resolves only once the
 * commit that holds its writes has returned. The result is the same as running them one after the
 * other, with one commit (one disk sync under `synchronous=FULL`) instead of many. Once its queue is
 * empty a transaction may let the event loop turn once before it commits, so that writes issued side by
 * side join it ({@link CommitTurns} decides when); on a synchronous driver (see
 * {@link StoreDatabase.syncStatements}) its statements run at once on the connection it holds.
 *
 * A transaction that meets a transient fault (see {@link StoreDialectCapabilities.faultOf}) before its
 * COMMIT is sent, or whose COMMIT the database refuses and rolls back, wrote nothing and runs again
 * whole, every unit it carried included; so a unit's work must be re-runnable: SQL on the connection
 * it is given, from inputs it does not change. A connection lost while COMMIT is in flight is not run
 * again: the outcome is unknown, and the caller gets `StoreUnavailableError` saying so. @internal
 */
export class WriteTransactions {
  readonly #db: Kysely<AgbossDatabase>;
  readonly #capabilities: StoreDialectCapabilities;
  readonly #gate: WriteGate;
  readonly #retry: FaultRetry;
  readonly #begin: CompiledQuery;
  readonly #sync: SyncStatements | undefined;
  readonly #inTransaction: (() => boolean) | undefined;
  readonly #queue: QueuedWork[] = [];
  readonly #turns = new CommitTurns();
  /** The transaction of the unit of work (see {@link atomically}) the caller runs in, if any. */
  readonly #unit = new AsyncLocalStorage<Kysely<AgbossDatabase>>();
  #draining = false;
  /** Set while the open transaction holds only writes that resolved as applied, between them (see {@link readsThrough}). */
  #readsThrough = false;
  /** What ended the open transaction under a read that ran in it (see {@link endedUnder}). */
  #endedUnderRead: { readonly error: unknown } | undefined;
  /** How many write transactions hold the connection of a synchronous driver right now (0 or 1). */
  #holds = 0;
  /** The write transactions asked for and not yet settled (see {@link idle}). */
  readonly #pending = new Set<Promise<unknown>>();
  /**
   * Fences (by lease key) whose applied writes (see {@link applied}) resolved in a transaction that then
   * failed to commit, with that failure: the holder's later writes are refused.
   */
  readonly #lostCommits = new Map<
    string,
    { readonly epoch: number; readonly error: unknown; readonly at: number }
  >();
  /**
   * Where commits are grouped: how many writes queued as applied have not ended yet (committed or
   * failed), by their fence's key (see {@link pendingUnder}).
   */
  readonly #appliedPending = new Map<string, number>();
  /**
   * Per open write transaction (by the connection it runs on), the fences its writes found current:
   * lease key → epoch. Within one transaction a lease's epoch changes only by a grant in it (every other
   * writer waits for its lock), so a fence is checked once per transaction (see {@link fenceChecked}).
   */
  readonly #checkedFences = new WeakMap<object, CheckedFences>();
  /** Where commits are not grouped: a pass's writes under its fence share a transaction (see {@link applied}). */
  readonly #passes: PassTransactions | undefined;
  /** What stores the writes a checkpointer holds back under a fence (see {@link holdBackFor}). */
  #heldFor: ((fence: Fence) => Promise<void> | undefined) | undefined;
  /**
   * Per attempt of a unit of work (by its transaction), the fences whose held-back writes it took in, by
   * key and epoch: if that attempt does not commit, they are gone (see {@link atomically}).
   */
  readonly #takenIn = new WeakMap<object, Map<string, Fence>>();

  /** `db` must run statements as they are: transactions are never retried statement by statement. */
  constructor(store: Omit<StoreDatabase, "transactions"> & { readonly retry?: FaultRetry | undefined }) {
    this.#db = store.db;
    this.#capabilities = store.capabilities;
    this.#gate = store.writeGate ?? openWriteGate;
    this.#retry = store.retry ?? new FaultRetry({ name: "", faultOf: store.capabilities.faultOf });
    this.#begin = CompiledQuery.raw(store.capabilities.beginWriteTransaction);
    this.#sync = store.syncStatements;
    this.#inTransaction = store.inTransaction;
    this.#passes = store.capabilities.groupCommit
      ? undefined
      : new PassTransactions({
          db: this.#db,
          begin: this.#begin,
          retry: this.#retry,
          gate: this.#gate,
          holding: (connection, work) => this.#holding(connection, work),
          began: (connection) => this.leasesChanged(connection),
          lost: (fence, error) => this.#loseFence(fence, error),
          commitWithNext:
            store.capabilities.commitWithNextStatement === undefined
              ? undefined
              : CompiledQuery.raw(store.capabilities.commitWithNextStatement),
        });
  }

  /**
   * Names what stores the writes a checkpointer holds back under a fence instead of running them as
   * they come (`KyselyCheckpointSaver` keeps a pass's latest checkpoint until something needs it stored):
   * every write given a fence calls it first, so what it queues for that fence goes ahead of the write,
   * in the same transaction where they share one. It returns undefined when it holds nothing for the
   * fence, else a promise of the held writes applied (rejected when one failed: see {@link loseFence}).
   */
  holdBackFor(flush: (fence: Fence) => Promise<void> | undefined): void {
    this.#heldFor = flush;
  }

  /** Queues what is held back under `fence` (see {@link holdBackFor}), ahead of whatever comes next. */
  flushHeld(fence: Fence | undefined): Promise<void> | undefined {
    return fence === undefined ? undefined : this.#heldFor?.(fence);
  }

  /**
   * Runs `work` in a write transaction; resolves once its writes are committed. Inside a unit of work
   * ({@link atomically}) it runs on the unit's transaction instead, and commits with it. Give `fence`
   * when `work` writes under it: where commits are not grouped, it then joins the fence's open pass
   * transaction, if any, and commits it (see {@link applied}).
   */
  run<T>(work: Work<T>, fence?: Fence, options?: WriteOptions): Promise<T> {
    const flushing = this.flushHeld(fence);
    const unit = this.#unit.getStore();
    if (unit !== undefined) return this.#inUnitAfter(flushing, fence, work, unit);
    if (!this.#capabilities.groupCommit) {
      return this.#tracked(
        this.#afterPasses(fence, "transaction", work, () => this.#gate(() => this.#alone(work)), flushing),
      );
    }
    return this.#tracked(
      new Promise<T>((resolve, reject) =>
        this.#enqueue({
          work,
          resolve: resolve as (value: unknown) => void,
          reject,
          undoesItself: undoesItself(options),
        }),
      ),
    );
  }

  /**
   * Runs `work`, a write under `fence`, as {@link run} does, but where commits are grouped it resolves
   * as soon as its statements have run in the open transaction, before that transaction commits: what
   * the caller does next (LangGraph's next checkpoint write, behind this one) can then join the same
   * commit. Its writes are committed with that transaction, in order, before any write queued after
   * them; so a write that does wait for its commit (see {@link run}) is only committed along with them.
   * If the transaction fails after `work` resolved, the writes are gone, and every later write under the
   * same fence (key and epoch) is refused with `StoreUnavailableError`, or `LeaseLostError` when the
   * transaction found the fence lost (see {@link refuseAfterLostCommit}); the
   * caller never builds on a state the store does not hold. Elsewhere, and inside a unit of work, the
   * same as {@link run}. The refusal is made where a write checks its fence (`FenceCheck`) and where a
   * lease is renewed; one-statement fenced writes (`writableCtes`) do not consult it, so a dialect
   * that groups commits must check fences with `FenceCheck`.
   *
   * Where commits are not grouped (a pool: Postgres), `work` must be idempotent: it runs in a
   * transaction of its fence's own (see `PassTransactions`), which the pass's next writes join, and
   * which commits once a few milliseconds passed without one, when a write given the same fence joins it, or
   * before any other read or write of the store runs; after a transient fault its writes run again.
   */
  applied<T>(fence: Fence, work: Work<T>, options?: WriteOptions): Promise<T> {
    const unit = this.#unit.getStore();
    if (unit !== undefined) {
      // A held write its pass's own read, confirm or release sent into a unit of work lives and dies with
      // the unit, as one a write of the unit took in does (see atomically): its caller was told done long
      // before. (Anyone else's read leaves it out of the unit: see the checkpointer's #storeHeldOf.)
      if (options?.toldDone === true) this.#takenIn.get(unit)?.set(fenceId(fence), fence);
      return this.run(work, fence);
    }
    this.flushHeld(fence);
    const passes = this.#passes;
    if (passes !== undefined) {
      try {
        this.refuseAfterLostCommit(fence);
      } catch (error) {
        return Promise.reject(error);
      }
      return passes.applied(fence, work, (end) => void this.#tracked(end), options?.toldDone === true);
    }
    let ended!: () => void;
    const end = new Promise<void>((resolve) => {
      ended = resolve;
    });
    // close() waits for the commit, not for the early resolution; a check of the fence's lease sees it.
    this.#tracked(end);
    this.#endsUnder(fence.key, end);
    return new Promise<T>((resolve, reject) =>
      this.#enqueue({
        work,
        resolve: resolve as (value: unknown) => void,
        reject: (error) => {
          reject(error);
          ended();
        },
        applied: { fence, resolved: false, ended, toldDone: options?.toldDone === true },
        undoesItself: undoesItself(options),
      }),
    );
  }

  /**
   * Throws the `StoreUnavailableError` a write under `fence` must fail with when an earlier write under
   * the same fence resolved as applied (see {@link applied}) in a transaction that did not commit; a
   * {@link LeaseLostError} when that transaction found the fence lost: the lease has a newer holder.
   */
  refuseAfterLostCommit(fence: Fence): void {
    const lost = this.#lostCommits.get(fence.key);
    if (lost === undefined || lost.epoch !== fence.epoch) return;
    if (lost.error instanceof LeaseLostError) throw new LeaseLostError(fence, { cause: lost.error });
    throw new StoreUnavailableError(
      `A checkpoint write of "${fence.key}" (lease epoch ${fence.epoch}) ran in a transaction that did ` +
        `not commit (${messageOf(lost.error)}), so this write, which would build on it, was refused. The ` +
        "store holds the execution as it was before that write: recovery continues it from there (or take " +
        "the lease again and run it).",
      { cause: lost.error },
    );
  }

  /**
   * Whether `trx`, an open write transaction of this store, found `fence` current since it began; if
   * not, a function that notes it did (call it once the lease row said so), or undefined outside this
   * store's write transactions. A note is dropped when the lease changed hands meanwhile.
   */
  fenceChecked(trx: Kysely<AgbossDatabase>, fence: Fence): true | (() => void) | undefined {
    const checked = this.#checkedFences.get(trx);
    if (checked === undefined) return undefined;
    if (checked.fences.get(fence.key) === fence.epoch) return true;
    const generation = checked.generation;
    return () => {
      if (checked.generation === generation) checked.fences.set(fence.key, fence.epoch);
    };
  }

  /** Forgets the fences `trx` found current: a lease changed hands in it, or its writes rolled back. */
  leasesChanged(trx: Kysely<AgbossDatabase>): void {
    const checked = this.#checkedFences.get(trx);
    if (checked === undefined) return;
    checked.generation += 1;
    checked.fences.clear();
  }

  /**
   * Settles once every write that resolved as applied so far is committed (or lost); undefined at once
   * when there is none. The store's reads wait for it.
   */
  settled(): Promise<void> | undefined {
    return this.#passes?.settle();
  }

  /**
   * Where pass transactions run: `work` (a write of kind `closing`) joins `fence`'s open pass, if any;
   * otherwise `alone` runs once every write that resolved before is committed. `flushing`, what was held
   * back under the fence and queued ahead of the write, is waited for first.
   */
  #afterPasses<T>(
    fence: Fence | undefined,
    closing: Closing,
    work: Work<T>,
    alone: () => Promise<T>,
    flushing?: Promise<void>,
  ): Promise<T> {
    const passes = this.#passes;
    if (passes === undefined) return alone();
    if (flushing !== undefined) {
      // What was held back ahead of the write (see holdBackFor) first runs where the write's transaction
      // can see it: only then does `settle` wait for its commit, and a pass that cannot take the write in
      // (its COMMIT in flight) commits it first. A failure there is on the fence already, met below.
      const go = () => this.#afterPasses(fence, closing, work, alone);
      return flushing.then(go, go);
    }
    if (fence !== undefined) {
      try {
        this.refuseAfterLostCommit(fence);
      } catch (error) {
        return Promise.reject(error);
      }
      const joined = passes.join(fence, closing, work);
      if (joined !== undefined) return joined;
    }
    const settling = passes.settle();
    if (settling === undefined) return alone();
    return settling.then(() => {
      // The pass it waited for may have been lost meanwhile.
      if (fence !== undefined) this.refuseAfterLostCommit(fence);
      return alone();
    });
  }

  #enqueue(unit: QueuedWork): void {
    this.#queue.push(unit);
    if (this.#draining) return;
    this.#draining = true;
    void this.#gate(() => this.#drain());
  }

  /**
   * Remembers that `unit`'s writes will not be committed where its caller went on as if they were: it
   * resolved as applied, or its caller was told done before it was issued (see {@link applied}).
   */
  #lost(unit: QueuedWork, error: unknown): void {
    const applied = unit.applied;
    if (applied?.resolved === true || applied?.toldDone === true) this.#loseFence(applied.fence, error);
  }

  /**
   * Remembers that a write under `fence` that its caller was told was done will not be committed
   * (`error` says why): every later write under the fence is refused (see {@link refuseAfterLostCommit}).
   * For a write held back and failing when it is finally run (see {@link holdBackFor}).
   */
  loseFence(fence: Fence, error: unknown): void {
    this.#loseFence(fence, error);
  }

  /**
   * Remembers that writes under `fence` resolved as applied and were not committed, because of `error`
   * (a takeover only if it says so of this lease: see `lossNotedFor`).
   */
  #loseFence(fence: Fence, failure: unknown): void {
    const error = lossNotedFor(fence, failure);
    // One entry per lease: an older holder's loss, noted late (its held write rejected after a newer
    // holder's), does not replace the newer one's, whose writes must stay refused.
    const known = this.#lostCommits.get(fence.key);
    if (known !== undefined && known.epoch > fence.epoch) return;
    // Nor does a later loss of the same holder replace a takeover already noted: the lease is gone.
    if (known?.epoch === fence.epoch && known.error instanceof LeaseLostError) return;
    const at = Date.now();
    this.#lostCommits.delete(fence.key);
    this.#lostCommits.set(fence.key, { epoch: fence.epoch, error, at });
    for (const [key, lost] of this.#lostCommits) {
      if (this.#lostCommits.size <= MAX_LOST_COMMITS || at - lost.at < LOST_COMMIT_KEPT_MS) break;
      this.#lostCommits.delete(key);
    }
  }

  /**
   * Runs `work` as one unit: the write transactions it starts through this store run on one transaction,
   * committed when `work` returns and rolled back when it throws; {@link current} hands its reads the
   * same transaction. A transient fault runs the whole unit again.
   */
  atomically<T>(work: () => Promise<T>): Promise<T> {
    if (this.#unit.getStore() !== undefined) return work();
    // Held-back writes a write of the unit took in (see holdBackFor) live and die with it: an attempt
    // that does not commit loses them, and a pass told they were done must not go on without them.
    const taken = new Map<string, Fence>();
    const loseTaken = (error: unknown) => {
      for (const fence of taken.values()) this.#loseFence(fence, error);
      taken.clear();
    };
    return this.run((trx) => {
      if (taken.size > 0) {
        loseTaken(
          new StoreUnavailableError(
            "A unit of work that took in held-back checkpoint writes ran again after a fault: they were not committed.",
          ),
        );
      }
      this.#takenIn.set(trx, taken);
      return this.#unit.run(trx, work);
    }).catch((error: unknown) => {
      loseTaken(error);
      throw error;
    });
  }

  /**
   * Runs `work` on a unit of work's transaction once what was held back ahead of it (`flushing`, under
   * `fence`) is applied there; notes the fence for the unit (see {@link atomically}).
   */
  #inUnitAfter<T>(
    flushing: Promise<void> | undefined,
    fence: Fence | undefined,
    work: Work<T>,
    unit: Kysely<AgbossDatabase>,
  ): Promise<T> {
    if (flushing === undefined || fence === undefined) return work(unit);
    this.#takenIn.get(unit)?.set(fenceId(fence), fence);
    return flushing.then(() => work(unit));
  }

  /**
   * Runs `work`, one idempotent write statement (running it twice leaves what running it once leaves),
   * as a transaction of its own: on the unit's transaction inside a unit of work ({@link atomically}),
   * queued with the others where commits are grouped, and otherwise alone on a connection in autocommit:
   * one round trip, no `begin` and `commit` around it. Being idempotent, it runs again after any
   * transient fault, even a connection lost while it was in flight.
   */
  statement<T>(work: Work<T>, fence?: Fence): Promise<T> {
    const flushing = this.flushHeld(fence);
    const unit = this.#unit.getStore();
    if (unit !== undefined) return this.#inUnitAfter(flushing, fence, work, unit);
    if (this.#capabilities.groupCommit) return this.run(work);
    return this.#tracked(
      this.#afterPasses(
        fence,
        "statement",
        work,
        () => this.#gate(() => this.#retry.statement(() => work(this.#db))),
        flushing,
      ),
    );
  }

  /**
   * Runs `work`, one write statement that is not safe to run twice (a conditional status change), as a
   * transaction of its own: on the unit's transaction inside a unit of work, queued with the others
   * where commits are grouped, and otherwise alone in autocommit, one round trip, where the statement
   * is its own COMMIT. So it runs again only when it could not get a connection or the server refused
   * it and rolled back (a deadlock, a serialization failure); a connection lost once the statement had
   * one (sent or not, waiting for a lock or not: the store cannot tell) gives `StoreUnavailableError`
   * saying the outcome is unknown, as a lost COMMIT does.
   */
  once<T>(work: Work<T>, fence?: Fence): Promise<T> {
    const flushing = this.flushHeld(fence);
    const unit = this.#unit.getStore();
    if (unit !== undefined) return this.#inUnitAfter(flushing, fence, work, unit);
    if (this.#capabilities.groupCommit) return this.run(work);
    return this.#tracked(
      this.#afterPasses(
        fence,
        "once",
        work,
        () =>
          this.#gate(() =>
            this.#retry.write(() =>
              this.#db.connection().execute(async (connection) => {
                try {
                  return await work(connection);
                } catch (error) {
                  throw new CommitFailure(error);
                }
              }),
            ),
          ),
        flushing,
      ),
    );
  }

  /**
   * Whether a write issued as applied under `fence`'s lease (see {@link applied}) may still be waiting
   * for its commit: where commits are grouped, one of them has not ended yet; where passes run on a
   * pool, a pass is open under the lease. Asked by a check that may answer only when nothing of the
   * fence waits to be committed (`LeaseRepository.confirm`).
   */
  pendingUnder(fence: Fence): boolean {
    if (this.#passes !== undefined) return this.#passes.hasOpen(fence.key);
    return this.#appliedPending.has(fence.key);
  }

  /** Counts a write applied under the fence `key` as pending until `end` settles (it never rejects). */
  #endsUnder(key: string, end: Promise<void>): void {
    this.#appliedPending.set(key, (this.#appliedPending.get(key) ?? 0) + 1);
    void end.then(() => {
      const left = (this.#appliedPending.get(key) ?? 1) - 1;
      if (left > 0) this.#appliedPending.set(key, left);
      else this.#appliedPending.delete(key);
    });
  }

  /**
   * Settles once the write transactions asked for so far have committed or failed (not those asked for
   * later): a store waits for it before it closes its database, so a transaction between its last
   * statement and its COMMIT (it waits for the event loop, or a pass's next write, there) is not cut off.
   */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.#pending]);
  }

  /** Counts `transaction` among the pending ones until it settles. */
  #tracked<T>(transaction: Promise<T>): Promise<T> {
    this.#pending.add(transaction);
    const settle = () => this.#pending.delete(transaction);
    transaction.then(settle, settle);
    return transaction;
  }

  /** Whether a write transaction holds the connection of a synchronous driver right now. */
  get holding(): boolean {
    return this.#holds > 0;
  }

  /**
   * Whether the open transaction holds only writes that resolved as applied (see {@link applied}), and
   * none is half run: waiting a turn for more before it commits, say. A read may run in it then, and
   * see them: their writers went on as if they were committed, and if the commit fails every later
   * write under their fences is refused (a write of anyone else that builds on the read fails only if
   * it joins the same transaction). A pass that reads its tree's pauses after writing its last
   * checkpoints then does not wait for their commit, and the write it makes next joins it.
   */
  get readsThrough(): boolean {
    return this.#readsThrough;
  }

  /**
   * Says that a read run in the open transaction (see {@link readsThrough}) failed and the connection
   * is no longer in a transaction: the transaction fails with `error` at its next statement, and with it
   * every write it carried, instead of going on outside one.
   */
  endedUnder(error: unknown): void {
    this.#endedUnderRead ??= { error };
  }

  /** Throws what ended the open transaction under a read, if anything did. */
  #assertNotEnded(): void {
    const ended = this.#endedUnderRead;
    if (ended === undefined) return;
    this.#endedUnderRead = undefined;
    throw ended.error;
  }

  /** The transaction of the unit of work the caller runs in, if any: reads inside a unit use it. */
  current(): Kysely<AgbossDatabase> | undefined {
    return this.#unit.getStore();
  }

  /**
   * Runs `work` outside the unit of work the caller runs in: what it reads, and what runs from it later,
   * goes on the store's own connections, not on the unit's transaction (see {@link current}).
   */
  outside<T>(work: () => T): T {
    return this.#unit.exit(work);
  }

  #alone<T>(work: Work<T>): Promise<T> {
    return this.#retry.write(() =>
      this.#db.connection().execute((connection) =>
        this.#holding(connection, async () => {
          await runCompiledOn(connection, this.#begin);
          let result: T;
          try {
            result = await work(connection);
          } catch (error) {
            // The work's own error is what the caller needs, even when the connection is gone too.
            await runCompiledOn(connection, ROLLBACK).catch(() => undefined);
            throw error;
          }
          await commit(connection);
          return result;
        }),
      ),
    );
  }

  /**
   * Runs `work`, one attempt at a write transaction, on `connection`: its fence checks are noted for the
   * attempt (see {@link fenceChecked}), and on a synchronous driver the connection is held (see `hold`),
   * so its statements run at once.
   */
  async #holding<T>(connection: Kysely<AgbossDatabase>, work: () => Promise<T>): Promise<T> {
    this.#checkedFences.set(connection, { generation: 0, fences: new Map() });
    const sync = this.#sync;
    if (sync !== undefined) {
      hold(connection, sync);
      this.#holds += 1;
    }
    try {
      return await work();
    } finally {
      this.#checkedFences.delete(connection);
      if (sync !== undefined) {
        this.#holds -= 1;
        letGo(connection);
      }
    }
  }

  async #drain(): Promise<void> {
    // The units the current transaction carries and has not settled: after a transient fault the
    // next attempt runs them all again.
    const group: QueuedWork[] = [];
    try {
      while (group.length > 0 || this.#queue.length > 0) {
        const attempt = { began: false };
        await this.#retry
          .write(() => {
            attempt.began = false;
            return this.#db
              .connection()
              .execute((connection) =>
                this.#holding(connection, () => this.#group(connection, group, attempt)),
              );
          })
          .catch((error: unknown) => {
            for (const unit of group.splice(0)) {
              this.#lost(unit, error);
              unit.reject(error);
            }
            // No transaction could begin: what waits for one would meet the same error.
            if (!attempt.began) {
              for (const unit of this.#queue.splice(0)) {
                this.#lost(unit, error);
                unit.reject(error);
              }
            }
          });
      }
    } finally {
      // Set in the same turn as the empty check, so a unit queued from now on starts a new drain.
      this.#draining = false;
    }
  }

  /**
   * One transaction: runs the units of `group`, then queued ones (added to `group`), until the queue is
   * empty, and commits them together. Settles each unit, and empties `group`, unless the transaction
   * fails as a whole: then it rolls back and throws, leaving `group` for the caller to retry or reject.
   */
  async #group(
    connection: Kysely<AgbossDatabase>,
    group: QueuedWork[],
    attempt: { began: boolean },
  ): Promise<void> {
    await runCompiledOn(connection, this.#begin);
    attempt.began = true;
    const done: { unit: QueuedWork; result: unknown }[] = [];
    // Whether the last unit run settled before the commit (see `CommitTurns`), and whether the loop
    // turned since then.
    let lastWent = false;
    let turned = false;
    // Whether every unit done so far resolved as applied: then, between units, reads run in it.
    let onlyApplied = true;
    try {
      let index = 0;
      for (;;) {
        if (index === group.length) {
          let queued = done.length < MAX_GROUP ? this.#queue.shift() : undefined;
          if (queued === undefined && done.length < MAX_GROUP && !turned && this.#turns.wanted(lastWent)) {
            // Before committing, let the event loop turn once: writes issued meanwhile without waiting
            // for this one (LangGraph's checkpoint writes, which run behind the graph's next step)
            // join this commit instead of needing one of their own.
            turned = true;
            await new Promise((resolve) => setImmediate(resolve));
            queued = this.#queue.shift();
            this.#turns.turned(lastWent, queued !== undefined);
            lastWent = false;
          }
          if (queued === undefined) break;
          group.push(queued);
        }
        const unit = group[index] as QueuedWork;
        const shared = done.length > 0;
        // A failing statement undoes itself (see `WriteOptions.oneWrite` and `WriteOptions.idempotent`).
        const savepoint = shared && !(unit.undoesItself === true && this.#inTransaction !== undefined);
        // A unit half run is not for anyone to read.
        this.#readsThrough = false;
        this.#assertNotEnded();
        if (savepoint) await runCompiledOn(connection, SAVEPOINT);
        try {
          const result = await unit.work(connection);
          done.push({ unit, result });
          index += 1;
          onlyApplied &&= unit.applied !== undefined;
          this.#readsThrough = onlyApplied;
          // Resolved once applied, its caller goes on now and may issue the next write: the transaction
          // waits a turn for it. A unit whose caller waits for the commit ran after the callers of the
          // units before it had gone on: what they issued while it ran is queued already.
          lastWent = unit.applied !== undefined;
          if (lastWent) turned = false;
          if (unit.applied !== undefined && !unit.applied.resolved) {
            unit.applied.resolved = true;
            unit.resolve(result);
          }
        } catch (error) {
          // A transient fault fails the transaction, not the unit: every unit it carries runs again.
          if (this.#retry.faultOf(error) !== undefined) throw error;
          group.splice(index, 1);
          unit.reject(error);
          // Its caller goes on too, and may write again: the transaction waits a turn for it.
          lastWent = true;
          turned = false;
          if (!shared) {
            this.#readsThrough = false;
            await runCompiledOn(connection, ROLLBACK);
            return;
          }
          if (savepoint) await runCompiledOn(connection, ROLLBACK_TO);
          // Without a savepoint, a failure that ended the transaction ends it for every unit.
          else if (this.#inTransaction?.() !== true) throw error;
          // Without one, writes the unit made before its failing statement stay (see
          // `WriteOptions.idempotent`): they are not a write reported done, so reads no longer run in it.
          else onlyApplied = false;
          this.leasesChanged(connection);
          this.#readsThrough = onlyApplied;
        }
        if (savepoint) await runCompiledOn(connection, RELEASE);
      }
      this.#readsThrough = false;
      this.#assertNotEnded();
      await commit(connection);
    } catch (error) {
      this.#readsThrough = false;
      this.#endedUnderRead = undefined;
      // A fault, or a failed savepoint, rollback or commit: the transaction and every write in it are gone.
      await runCompiledOn(connection, ROLLBACK).catch(() => undefined);
      // Units that resolved as applied are not run again: their callers went on (and may have read
      // around them) while they were not committed. The group fails instead, and their fences with it.
      if (group.some((unit) => unit.applied?.resolved === true)) throw notRunAgain(error);
      throw error;
    }
    group.splice(0);
    for (const { unit, result } of done) {
      unit.resolve(result);
      unit.applied?.ended();
    }
  }
}

/**
 * A transaction that failed after some of its units resolved as applied, around its error (a
 * {@link CommitFailure}'s cause, unwrapped): not a transient fault, so it is not run again.
 */
function notRunAgain(error: unknown): StoreUnavailableError {
  const cause = error instanceof CommitFailure ? error.error : error;
  return new StoreUnavailableError(
    `A write transaction failed (${messageOf(cause)}) after checkpoint writes in it had been reported done, so it ` +
      "was not run again: nothing in it was committed. The executions that wrote them are recovered from " +
      "what the store holds.",
    { cause },
  );
}

/**
 * What a failure that took writes of a lease with it (a unit of work or a transaction that carried them
 * along with others) notes for that lease: the failure itself, unless it says another lease was taken
 * over, which says nothing of this one's.
 */
function lossNotedFor(fence: Fence, error: unknown): unknown {
  if (!(error instanceof LeaseLostError)) return error;
  if (error.fence.key === fence.key && error.fence.epoch === fence.epoch) return error;
  return new StoreUnavailableError(
    `A transaction that carried writes of "${fence.key}" failed: ${messageOf(error)}`,
    { cause: error },
  );
}

/**
 * A fence's key and epoch as one map key: a unit that took in held writes of two holders of one lease
 * (an older one's and its successor's) notes both, so that its rollback marks each lost.
 */
function fenceId(fence: Fence): string {
  return `${fence.epoch}:${fence.key}`;
}

/** An error's message, or what it is as text. */
function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Commits; a failure becomes a {@link CommitFailure}, after a rollback (SQLite keeps a refused transaction open). */
async function commit(connection: Kysely<AgbossDatabase>): Promise<void> {
  try {
    await runCompiledOn(connection, COMMIT);
  } catch (error) {
    await runCompiledOn(connection, ROLLBACK).catch(() => undefined);
    throw new CommitFailure(error);
  }
}

/**
 * Runs `work` in one write transaction, begun the way the dialect wants, on one reserved connection;
 * commits when it returns and rolls back when it throws. @internal
 */
export function inWriteTransaction<T>(
  store: StoreDatabase,
  work: Work<T>,
  fence?: Fence,
  options?: WriteOptions,
): Promise<T> {
  return (store.transactions ?? new WriteTransactions(store)).run(work, fence, options);
}

/**
 * Runs `work`, a write under `fence`, in one write transaction that may resolve once applied, before
 * its commit (see {@link WriteTransactions.applied}). @internal
 */
export function inAppliedWrite<T>(
  store: StoreDatabase,
  fence: Fence,
  work: Work<T>,
  options?: WriteOptions,
): Promise<T> {
  // Without the store's own transactions nothing would wait for an early resolution's commit.
  return store.transactions?.applied(fence, work, options) ?? new WriteTransactions(store).run(work);
}

/**
 * Runs `work`, one idempotent write statement, as its own transaction (see
 * {@link WriteTransactions.statement}). @internal
 */
export function inWriteStatement<T>(store: StoreDatabase, work: Work<T>, fence?: Fence): Promise<T> {
  return (store.transactions ?? new WriteTransactions(store)).statement(work, fence);
}

/**
 * Runs `work`, one write statement that is not safe to run twice, as its own transaction (see
 * {@link WriteTransactions.once}). @internal
 */
export function inWriteOnce<T>(store: StoreDatabase, work: Work<T>, fence?: Fence): Promise<T> {
  return (store.transactions ?? new WriteTransactions(store)).once(work, fence);
}
