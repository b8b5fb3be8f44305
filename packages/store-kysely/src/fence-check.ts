import { LeaseLostError } from "@agboss/core";
import type { Fence } from "@agboss/core/store";
import type { Kysely } from "kysely";
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
}
