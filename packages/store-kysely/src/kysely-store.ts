import type { Store } from "@agboss/core";
import type { Kysely } from "kysely";
import { KyselyCheckpointSaver } from "./checkpoint/kysely-checkpoint-saver.js";
import { FaultRetry } from "./fault-retry.js";
import { readAtOnce, type SyncStatements } from "./held-connections.js";
import { migrateStore } from "./migrations/migrate-store.js";
import { KyselyBudgetLedgerRepository } from "./repositories/kysely-budget-ledger-repository.js";
import { KyselyExecutionRecordRepository } from "./repositories/kysely-execution-record-repository.js";
import { KyselyLeaseRepository } from "./repositories/kysely-lease-repository.js";
import { KyselyPausedExecutionRepository } from "./repositories/kysely-paused-execution-repository.js";
import { KyselyThreadRepository } from "./repositories/kysely-thread-repository.js";
import { withRetriedReads } from "./retried-reads.js";
import type { AgbossDatabase } from "./schema/agboss-database.js";
import type { StoreDialectCapabilities } from "./store-dialect-capabilities.js";
import type { StoreRetryOptions } from "./store-faults.js";
import type { WriteGate } from "./write-gate.js";
import { type StoreDatabase, WriteTransactions } from "./write-transactions.js";

/** What a {@link KyselyStore} is built from. */
export interface KyselyStoreConfig {
  /** The database, on any kysely dialect. */
  readonly db: Kysely<AgbossDatabase>;
  /** What the dialect does differently. */
  readonly capabilities: StoreDialectCapabilities;
  /** The store's name for logs, e.g. `sqlite:/var/lib/app/agboss.sqlite`. */
  readonly name: string;
  /**
   * The schema that holds the store's tables, on a dialect that has schemas (Postgres): every query the
   * store runs names it, and the migrator keeps its own tables there. Leave it out on SQLite.
   */
  readonly schema?: string | undefined;
  /** Runs once on `close()`, e.g. to destroy the kysely instance the adapter opened. */
  readonly onClose?: (() => Promise<void>) | undefined;
  /** Serialises write transactions in this process; see {@link WriteGate}. */
  readonly writeGate?: WriteGate | undefined;
  /**
   * How reads and write transactions that meet a transient fault (as the capabilities' `faultOf` names
   * it) are retried before the caller gets `StoreUnavailableError`. Default: 5 attempts, waiting
   * 25 ms, doubling up to 400 ms, between them (`DEFAULT_STORE_RETRY`).
   */
  readonly retry?: StoreRetryOptions | undefined;
  /**
   * For a driver that answers synchronously on one connection (better-sqlite3, which
   * `@agboss/store-sqlite` gives): runs one statement at once, as the dialect's driver would. A write
   * transaction's statements then run through it on the connection the transaction holds, skipping
   * the promises of kysely's driver, and with them kysely's query log and any plugin's result
   * transform (the store's own instance has neither). Leave it out for any driver that talks to a
   * server.
   */
  readonly syncStatements?: SyncStatements | undefined;
  /**
   * With `syncStatements`: whether the connection it runs on has no transaction open right now
   * (better-sqlite3's `!inTransaction`), whoever opened it. Reads outside the store's write
   * transactions then run through `syncStatements` too, while it says so and none of the store's own
   * write transactions holds the connection, or while the one that holds it holds only writes already
   * reported done (see `WriteTransactions.readsThrough`); otherwise they go through kysely and wait for
   * the transaction to end. Leave it out and they always go through kysely. Given, a write of one
   * statement also shares a grouped transaction without a savepoint of its own (see `WriteOptions`):
   * the store can then tell whether a failing statement ended the transaction.
   */
  readonly syncIdle?: (() => boolean) | undefined;
}

/**
 * Every store contract on one kysely database: the adapters (`@agboss/store-sqlite`,
 * `@agboss/store-postgres`) add only a dialect and its capabilities.
 *
 * Transient faults are retried in two places: every read statement (on a fresh connection), and every
 * write transaction as a whole when it is known not to have committed (see `WriteTransactions`).
 *
 * @example
 * const store = new KyselyStore({ db, capabilities, name: "sqlite:./app.sqlite" });
 * await store.migrate();
 */
export class KyselyStore implements Store {
  readonly name: string;
  readonly threads: KyselyThreadRepository;
  readonly executions: KyselyExecutionRecordRepository;
  readonly leases: KyselyLeaseRepository;
  readonly pauses: KyselyPausedExecutionRepository;
  readonly checkpointer: KyselyCheckpointSaver;
  readonly budgets: KyselyBudgetLedgerRepository;
  /** 1 where commits are grouped (one writer at a time: SQLite), 4 where transactions run side by side. */
  readonly recoveryConcurrency: number;
  /** The store's database as given, scoped to its schema: transactions and migrations run here. */
  readonly #db: Kysely<AgbossDatabase>;
  readonly #database: StoreDatabase;
  readonly #transactions: WriteTransactions;
  readonly #schema: string | undefined;
  readonly #onClose: (() => Promise<void>) | undefined;
  #closing: Promise<void> | undefined;

  constructor(config: KyselyStoreConfig) {
    this.name = config.name;
    this.#schema = config.schema;
    const db = config.schema === undefined ? config.db : config.db.withSchema(config.schema);
    const capabilities = Object.freeze({ ...config.capabilities });
    const retry = new FaultRetry({ name: config.name, faultOf: capabilities.faultOf, retry: config.retry });
    this.#db = db;
    const transactions = new WriteTransactions({
      db,
      capabilities,
      writeGate: config.writeGate,
      retry,
      syncStatements: config.syncStatements,
      inTransaction: config.syncIdle === undefined ? undefined : negate(config.syncIdle),
    });
    const reads = capabilities.faultOf === undefined ? db : withRetriedReads(db, retry);
    const { syncStatements, syncIdle } = config;
    if (syncStatements !== undefined && syncIdle !== undefined) {
      readAtOnce(
        reads,
        (sql, parameters) => {
          const through = transactions.readsThrough;
          try {
            return syncStatements(sql, parameters);
          } catch (error) {
            // A read that failed in the open transaction may have ended it (SQLite rolls back on an
            // I/O error, say): the transaction must not go on as if it were still open.
            if (through && syncIdle()) transactions.endedUnder(error);
            throw error;
          }
        },
        () => !transactions.readsThrough && (transactions.holding || !syncIdle()),
      );
    }
    this.#transactions = transactions;
    // Reads inside a unit of work run on its transaction: they see its writes, and on Postgres they do
    // not wait for a second connection of the pool.
    const databaseReading = (outside: Kysely<AgbossDatabase>): StoreDatabase =>
      Object.freeze({
        get db() {
          return transactions.current() ?? outside;
        },
        capabilities,
        writeGate: config.writeGate,
        transactions,
      });
    this.#database = databaseReading(reads);
    // Where commits are not grouped, the checkpointer's reads first wait for the checkpoint writes that
    // resolved before them to commit (see `PassTransactions`): the repositories' tables hold no such writes.
    const checkpointDatabase = capabilities.groupCommit
      ? this.#database
      : databaseReading(withRetriedReads(db, retry, () => transactions.settled()));
    this.#onClose = config.onClose;
    this.recoveryConcurrency = capabilities.groupCommit ? 1 : 4;
    this.threads = new KyselyThreadRepository(this.#database);
    this.executions = new KyselyExecutionRecordRepository(this.#database);
    this.leases = new KyselyLeaseRepository(this.#database);
    this.pauses = new KyselyPausedExecutionRepository(this.#database);
    this.checkpointer = new KyselyCheckpointSaver(checkpointDatabase);
    this.budgets = new KyselyBudgetLedgerRepository(this.#database);
  }

  /**
   * The kysely instance the store runs on, naming the store's schema in every query when it has one.
   * What you run on it yourself is not retried.
   */
  get db(): Kysely<AgbossDatabase> {
    return this.#db;
  }

  atomically<T>(work: () => Promise<T>): Promise<T> {
    return this.#transactions.atomically(work);
  }

  /** Brings the schema to the latest version; safe to call on every start. */
  async migrate(): Promise<void> {
    await migrateStore(this.#db as unknown as Kysely<unknown>, this.#database.capabilities, {
      schema: this.#schema,
    });
  }

  /** Waits for the write transactions queued so far, then runs `onClose` once; later calls wait for the first. */
  close(): Promise<void> {
    // What the checkpointer holds back goes to the store first: the writes it queues are waited for.
    this.#closing ??= this.checkpointer
      .storeAllHeld()
      .then(() => this.#transactions.idle())
      .then(() => this.#onClose?.());
    return this.#closing;
  }
}

/** The opposite of `idle`: whether the connection has a transaction open. */
function negate(idle: () => boolean): () => boolean {
  return () => !idle();
}
