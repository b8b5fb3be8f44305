import { LeaseLostError } from "@agboss/core";
import type { Fence } from "@agboss/core/store";
import { type Expression, type ExpressionBuilder, type Kysely, type SqlBool, sql } from "kysely";
import { PreparedQuery } from "./prepared-query.js";
import type { AgbossDatabase } from "./schema/agboss-database.js";
import { toNumber } from "./schema/columns.js";
import type { StoreDatabase } from "./write-transactions.js";

/** Compares a fence with its lease row, with one statement compiled once per store. @internal */
export class FenceCheck {
  readonly #epochOf: PreparedQuery<{ key: string }, { epoch: number | string | bigint }>;
  readonly #store: StoreDatabase;

  constructor(store: StoreDatabase) {
    this.#store = store;
    this.#epochOf = new PreparedQuery((slot) => {
      const query = store.db.selectFrom("agboss_leases").select("epoch").where("key", "=", slot("key"));
      // A shared lock: a holder's writes check their fence side by side, while a takeover (which
      // updates the row) waits for every write that checked before it, and writes after it see the new epoch.
      return store.capabilities.lockRowsForUpdate ? query.forShare() : query;
    });
  }

  /**
   * Throws {@link LeaseLostError} unless the lease row still carries the fence's epoch, and
   * `StoreUnavailableError` (or `LeaseLostError`, when it found the fence lost) when an earlier write
   * under the fence resolved but did not commit (see `WriteTransactions.applied`). Call it inside the write transaction, before writing.
   */
  async assert(trx: Kysely<AgbossDatabase>, fence: Fence | undefined): Promise<void> {
    if (fence === undefined) return;
    const transactions = this.#store.transactions;
    transactions?.refuseAfterLostCommit(fence);
    // Checked already in this transaction: nobody else can have taken the lease since (see fenceChecked).
    const checked = transactions?.fenceChecked(trx, fence);
    if (checked === true) return;
    const row = await this.#epochOf.first(trx, { key: fence.key });
    if (row === undefined || toNumber(row.epoch) !== fence.epoch) throw new LeaseLostError(fence);
    checked?.();
  }

  /**
   * Runs `write`, one conditional write statement, under `fence` inside the write transaction, as
   * {@link assert} then the write would, and returns what it wrote (undefined when its condition did
   * not hold). Where the transaction locks the whole database (no row locks: SQLite), the fence goes
   * into the statement instead: `write` is given it, and must write only while the lease row carries its
   * epoch (see {@link holdsLease}). The lease row is then read only when nothing was written, to tell a
   * lost lease ({@link LeaseLostError}) from a condition that did not hold: one statement fewer.
   */
  async around<T>(
    trx: Kysely<AgbossDatabase>,
    fence: Fence | undefined,
    write: (fence: Fence | undefined) => Promise<T | undefined>,
  ): Promise<T | undefined> {
    if (fence === undefined || this.#store.capabilities.lockRowsForUpdate) {
      await this.assert(trx, fence);
      return write(undefined);
    }
    const transactions = this.#store.transactions;
    transactions?.refuseAfterLostCommit(fence);
    const checked = transactions?.fenceChecked(trx, fence);
    if (checked === true) return write(undefined);
    const written = await write(fence);
    if (written === undefined) {
      await this.assert(trx, fence);
      return undefined;
    }
    // It wrote, so the lease row carried the epoch, and nobody can change it before the commit.
    checked?.();
    return written;
  }
}

/**
 * The condition a statement given a fence by {@link FenceCheck.around} adds: the lease row named by the
 * `fenceKey` slot carries the `fenceEpoch` slot's epoch. @internal
 */
export function holdsLease<DB extends AgbossDatabase, TB extends keyof DB>(
  slot: (name: "fenceKey" | "fenceEpoch") => unknown,
): (eb: ExpressionBuilder<DB, TB>) => Expression<SqlBool> {
  return (eb) =>
    eb.exists(
      (eb as unknown as ExpressionBuilder<AgbossDatabase, never>)
        .selectFrom("agboss_leases")
        .select(sql<number>`1`.as("held"))
        .where("key", "=", slot("fenceKey") as string)
        .where("epoch", "=", slot("fenceEpoch") as number),
    );
}
