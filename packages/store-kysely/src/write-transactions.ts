import { CompiledQuery, type Kysely } from "kysely";
import type { AgbossDatabase } from "./schema/agboss-database.js";
import type { StoreDialectCapabilities } from "./store-dialect-capabilities.js";
import { openWriteGate, type WriteGate } from "./write-gate.js";

/** What the repositories share: one database, its dialect's capabilities and its write gate. @internal */
export interface StoreDatabase {
  readonly db: Kysely<AgbossDatabase>;
  readonly capabilities: StoreDialectCapabilities;
  readonly writeGate?: WriteGate | undefined;
  /** Runs the store's write transactions; without it each runs on its own. */
  readonly transactions?: WriteTransactions | undefined;
}

type Work<T> = (trx: Kysely<AgbossDatabase>) => Promise<T>;

interface QueuedWork {
  readonly work: Work<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** Most units one commit carries, so a steady stream of writes still commits now and then. */
const MAX_GROUP = 64;
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
 * other, with one commit (one disk sync under `synchronous=FULL`) instead of many. @internal
 */
export class WriteTransactions {
  readonly #db: Kysely<AgbossDatabase>;
  readonly #capabilities: StoreDialectCapabilities;
  readonly #gate: WriteGate;
  readonly #begin: CompiledQuery;
  readonly #queue: QueuedWork[] = [];
  #draining = false;

  constructor(store: Omit<StoreDatabase, "transactions">) {
    this.#db = store.db;
    this.#capabilities = store.capabilities;
    this.#gate = store.writeGate ?? openWriteGate;
    this.#begin = CompiledQuery.raw(store.capabilities.beginWriteTransaction);
  }

  /** Runs `work` in a write transaction; resolves once its writes are committed. */
  run<T>(work: Work<T>): Promise<T> {
    if (!this.#capabilities.groupCommit) return this.#gate(() => this.#alone(work));
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.#draining) return;
      this.#draining = true;
      void this.#gate(() => this.#drain());
    });
  }

  #alone<T>(work: Work<T>): Promise<T> {
    return this.#db.connection().execute(async (connection) => {
      await connection.executeQuery(this.#begin);
      let result: T;
      try {
        result = await work(connection);
      } catch (error) {
        await connection.executeQuery(ROLLBACK);
        throw error;
      }
      await connection.executeQuery(COMMIT);
      return result;
    });
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        await this.#db
          .connection()
          .execute((connection) => this.#group(connection))
          .catch((error: unknown) => {
            // No transaction could begin: what waits for one would meet the same error.
            for (const unit of this.#queue.splice(0)) unit.reject(error);
          });
      }
    } finally {
      // Set in the same turn as the empty check, so a unit queued from now on starts a new drain.
      this.#draining = false;
    }
  }

  /** One transaction: runs queued units until the queue is empty, then commits them together. */
  async #group(connection: Kysely<AgbossDatabase>): Promise<void> {
    await connection.executeQuery(this.#begin);
    const done: { unit: QueuedWork; result: unknown }[] = [];
    try {
      let unit = this.#queue.shift();
      while (unit !== undefined) {
        const shared = done.length > 0;
        if (shared) await connection.executeQuery(SAVEPOINT);
        try {
          done.push({ unit, result: await unit.work(connection) });
          if (shared) await connection.executeQuery(RELEASE);
        } catch (error) {
          if (!shared) {
            unit.reject(error);
            await connection.executeQuery(ROLLBACK);
            return;
          }
          await connection.executeQuery(ROLLBACK_TO);
          await connection.executeQuery(RELEASE);
          unit.reject(error);
        }
        unit = done.length < MAX_GROUP ? this.#queue.shift() : undefined;
      }
      await connection.executeQuery(COMMIT);
    } catch (error) {
      // A failed savepoint, rollback or commit: the transaction and every write in it are gone.
      await connection.executeQuery(ROLLBACK).catch(() => undefined);
      for (const { unit } of done) unit.reject(error);
      return;
    }
    for (const { unit, result } of done) unit.resolve(result);
  }
}

/**
 * Runs `work` in one write transaction, begun the way the dialect wants, on one reserved connection;
 * commits when it returns and rolls back when it throws. @internal
 */
export function inWriteTransaction<T>(store: StoreDatabase, work: Work<T>): Promise<T> {
  return (store.transactions ?? new WriteTransactions(store)).run(work);
}
