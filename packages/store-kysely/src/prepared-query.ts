import type { Compilable, Kysely, QueryResult } from "kysely";
import { runOn } from "./held-connections.js";
import type { AgbossDatabase } from "./schema/agboss-database.js";
import type { StoreDatabase } from "./write-transactions.js";

/** Stands for an argument in a query compiled once; replaced by the argument's value on each run. */
class Slot {
  constructor(readonly name: string) {}
}

/** Names the arguments of a {@link PreparedQuery} while it is built. */
export type SlotOf<TArgs> = <TName extends keyof TArgs & string>(name: TName) => TArgs[TName];

/**
 * A query built and compiled once, on the store's dialect, and run many times with new arguments: the
 * hot paths skip kysely's builder and compiler. Build it with `slot(name)` wherever an argument goes;
 * every other value stays as compiled. Only for queries whose shape never depends on the arguments: an
 * `in` list or a multi-row insert needs one per length (see `CheckpointQueries`). @internal
 *
 * @example
 * const byKey = new PreparedQuery<{ key: string }, { epoch: number }>((slot) =>
 *   db.selectFrom("agboss_leases").select("epoch").where("key", "=", slot("key")),
 * );
 * const { rows } = await byKey.execute(trx, { key: "tenant/thread" });
 */
export class PreparedQuery<TArgs, TRow = unknown> {
  readonly #sql: string;
  readonly #parameters: readonly unknown[];

  constructor(build: (slot: SlotOf<TArgs>) => Compilable<unknown>) {
    const compiled = build(((name: string) => new Slot(name)) as SlotOf<TArgs>).compile();
    this.#sql = compiled.sql;
    this.#parameters = compiled.parameters;
  }

  /**
   * Runs the query on `db` (the store's database or a transaction's connection); on a connection a
   * write transaction holds on a synchronous driver, at once (see `hold`).
   */
  execute(db: Kysely<AgbossDatabase>, args: TArgs): Promise<QueryResult<TRow>> {
    return runOn<TRow>(db, this.#sql, this.#parametersOf(args));
  }

  /** The statement's parameters, each slot replaced by its argument. */
  #parametersOf(args: TArgs): unknown[] {
    const values = args as Record<string, unknown>;
    return this.#parameters.map((value) => (value instanceof Slot ? values[value.name] : value));
  }

  /**
   * Runs the query, a write that returns no rows and whose result the caller does not read, on `db`, a
   * write transaction's connection. Where the dialect can (`deferUnreadStatement`), the driver may send
   * it with the transaction's next statement or its `commit`, in one round trip: its error, if any, then
   * fails that statement or that `commit`, and the transaction with it. Elsewhere, {@link execute}.
   */
  async unread(store: StoreDatabase, db: Kysely<AgbossDatabase>, args: TArgs): Promise<void> {
    const marker = store.capabilities.deferUnreadStatement;
    await runOn(db, marker === undefined ? this.#sql : marker + this.#sql, this.#parametersOf(args));
  }

  /** Runs the query and returns its first row, if any. */
  async first(db: Kysely<AgbossDatabase>, args: TArgs): Promise<TRow | undefined> {
    return (await this.execute(db, args)).rows[0];
  }

  /** Runs the statement and returns how many rows it inserted, updated or deleted. */
  async affected(db: Kysely<AgbossDatabase>, args: TArgs): Promise<number> {
    return Number((await this.execute(db, args)).numAffectedRows ?? 0n);
  }
}
