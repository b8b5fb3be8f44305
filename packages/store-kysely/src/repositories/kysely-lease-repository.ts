import type { Fence, Lease, LeaseRepository } from "@agboss/core";
import { toMillis, toNumber } from "../schema/columns.js";
import { inWriteTransaction, type StoreDatabase } from "../write-transactions.js";

/**
 * {@link LeaseRepository} on kysely. A lease row is never deleted: releasing lapses it, so the next
 * holder's epoch is always larger than any fence handed out before.
 */
export class KyselyLeaseRepository implements LeaseRepository {
  readonly #store: StoreDatabase;

  constructor(store: StoreDatabase) {
    this.#store = store;
  }

  acquire(args: { key: string; holder: string; now: number; ttlMs: number }): Promise<Lease | undefined> {
    const { key, holder, now, ttlMs } = args;
    const expiresAt = now + ttlMs;
    return inWriteTransaction(this.#store, async (trx) => {
      let query = trx.selectFrom("agboss_leases").selectAll().where("key", "=", key);
      if (this.#store.capabilities.lockRowsForUpdate) query = query.forUpdate();
      const current = await query.executeTakeFirst();
      if (current === undefined) {
        const inserted = await trx
          .insertInto("agboss_leases")
          .values({ key, holder, epoch: 1, expires_at: expiresAt })
          .onConflict((oc) => oc.column("key").doNothing())
          .executeTakeFirst();
        return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1
          ? { key, holder, epoch: 1, expiresAt }
          : undefined;
      }
      const epoch = toNumber(current.epoch);
      if (current.holder !== holder && toMillis(current.expires_at) > now) return undefined;
      const updated = await trx
        .updateTable("agboss_leases")
        .set({ holder, epoch: epoch + 1, expires_at: expiresAt })
        .where("key", "=", key)
        .where("epoch", "=", epoch)
        .executeTakeFirst();
      return Number(updated.numUpdatedRows) === 1 ? { key, holder, epoch: epoch + 1, expiresAt } : undefined;
    });
  }

  async renew(args: { fence: Fence; now: number; ttlMs: number }): Promise<boolean> {
    const { fence, now, ttlMs } = args;
    const updated = await inWriteTransaction(this.#store, (trx) =>
      trx
        .updateTable("agboss_leases")
        .set({ expires_at: now + ttlMs })
        .where("key", "=", fence.key)
        .where("epoch", "=", fence.epoch)
        .executeTakeFirst(),
    );
    return Number(updated.numUpdatedRows) === 1;
  }

  async release(fence: Fence): Promise<void> {
    await inWriteTransaction(this.#store, (trx) =>
      trx
        .updateTable("agboss_leases")
        .set({ expires_at: 0 })
        .where("key", "=", fence.key)
        .where("epoch", "=", fence.epoch)
        .execute(),
    );
  }

  async find(key: string): Promise<Lease | undefined> {
    const row = await this.#store.db
      .selectFrom("agboss_leases")
      .selectAll()
      .where("key", "=", key)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    return {
      key: row.key,
      holder: row.holder,
      epoch: toNumber(row.epoch),
      expiresAt: toMillis(row.expires_at),
    };
  }
}
