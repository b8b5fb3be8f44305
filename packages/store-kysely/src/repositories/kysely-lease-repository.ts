import type { Fence, Lease, LeaseRepository } from "@agboss/core/store";
import { RELEASED_LEASE_EXPIRY } from "@agboss/core/store";
import type { Kysely, Selectable } from "kysely";
import { PreparedQuery } from "../prepared-query.js";
import type { AgbossDatabase, LeaseTable } from "../schema/agboss-database.js";
import { toMillis, toNumber } from "../schema/columns.js";
import { inWriteStatement, inWriteTransaction, type StoreDatabase } from "../write-transactions.js";

type Granted = { key: string; holder: string; epoch: number; expires_at: number };

/** Sets a lease's expiry while it carries the given epoch (0 releases it). @internal */
export function expireLeaseQuery(
  store: StoreDatabase,
): PreparedQuery<{ key: string; epoch: number; expires_at: number }> {
  return new PreparedQuery((slot) =>
    store.db
      .updateTable("agboss_leases")
      .set({ expires_at: slot("expires_at") })
      .where("key", "=", slot("key"))
      .where("epoch", "=", slot("epoch")),
  );
}

/**
 * {@link LeaseRepository} on kysely. A lease row is never deleted: releasing lapses it, so the next
 * holder's epoch is always larger than any fence handed out before.
 */
export class KyselyLeaseRepository implements LeaseRepository {
  readonly #store: StoreDatabase;
  readonly #find: PreparedQuery<{ key: string }, Selectable<LeaseTable>>;
  readonly #lock: PreparedQuery<{ key: string }, Selectable<LeaseTable>>;
  readonly #insert: PreparedQuery<Granted>;
  readonly #take: PreparedQuery<Granted & { from: number }>;
  readonly #expire: PreparedQuery<{ key: string; epoch: number; expires_at: number }>;
  /** The whole of {@link acquire} as one statement, where the dialect has `returning`. */
  readonly #grant: PreparedQuery<
    Granted & { now: number; take_over: number },
    { epoch: number | string | bigint }
  >;
  readonly #renew: PreparedQuery<{ key: string; epoch: number; expires_at: number }>;

  constructor(store: StoreDatabase) {
    this.#store = store;
    const db = store.db;
    const select = (key: string) => db.selectFrom("agboss_leases").selectAll().where("key", "=", key);
    this.#find = new PreparedQuery((slot) => select(slot("key")));
    this.#lock = new PreparedQuery((slot) =>
      store.capabilities.lockRowsForUpdate ? select(slot("key")).forUpdate() : select(slot("key")),
    );
    this.#insert = new PreparedQuery((slot) =>
      db
        .insertInto("agboss_leases")
        .values({
          key: slot("key"),
          holder: slot("holder"),
          epoch: slot("epoch"),
          expires_at: slot("expires_at"),
        })
        .onConflict((oc) => oc.column("key").doNothing()),
    );
    this.#take = new PreparedQuery((slot) =>
      db
        .updateTable("agboss_leases")
        .set({ holder: slot("holder"), epoch: slot("epoch"), expires_at: slot("expires_at") })
        .where("key", "=", slot("key"))
        .where("epoch", "=", slot("from")),
    );
    // Insert the first grant, or grant the next epoch over a lapsed lease, one of the holder's own, or
    // any when taking over; otherwise nothing is returned. The conflict update locks the row as the
    // select for update does, so a takeover still waits for fenced writes in flight.
    this.#grant = new PreparedQuery((slot) =>
      db
        .insertInto("agboss_leases")
        .values({
          key: slot("key"),
          holder: slot("holder"),
          epoch: slot("epoch"),
          expires_at: slot("expires_at"),
        })
        .onConflict((oc) =>
          oc
            .column("key")
            .doUpdateSet((eb) => ({
              holder: eb.ref("excluded.holder"),
              epoch: eb(eb.ref("agboss_leases.epoch"), "+", 1),
              expires_at: eb.ref("excluded.expires_at"),
            }))
            .where((eb) =>
              eb.or([
                eb(eb.ref("agboss_leases.holder"), "=", eb.ref("excluded.holder")),
                eb(eb.ref("agboss_leases.expires_at"), "<=", slot("now")),
                eb(eb.val(slot("take_over")), "=", 1),
              ]),
            ),
        )
        .returning("epoch"),
    );
    this.#expire = expireLeaseQuery(store);
    // A released lease (expiry 0) stays released: a renewal in flight when it was let go revives nothing.
    this.#renew = new PreparedQuery((slot) =>
      db
        .updateTable("agboss_leases")
        .set({ expires_at: slot("expires_at") })
        .where("key", "=", slot("key"))
        .where("epoch", "=", slot("epoch"))
        .where("expires_at", ">", 0),
    );
  }

  acquire(args: {
    key: string;
    holder: string;
    now: number;
    ttlMs: number;
    takeOver?: boolean;
  }): Promise<Lease | undefined> {
    const { key, holder, now, ttlMs, takeOver } = args;
    const expiresAt = now + ttlMs;
    if (this.#store.capabilities.supportsReturning) {
      // One statement. Run again after a fault that left its outcome unknown, it grants the same holder
      // the next epoch: a valid lease whose fence supersedes the one that may have been granted.
      return inWriteStatement(this.#store, async (db) => {
        const row = await this.#grant.first(db, {
          key,
          holder,
          epoch: 1,
          expires_at: expiresAt,
          now,
          take_over: takeOver === true ? 1 : 0,
        });
        if (row === undefined) return undefined;
        const lease = { key, holder, epoch: toNumber(row.epoch), expiresAt };
        this.#granted(db, lease);
        return lease;
      });
    }
    return inWriteTransaction(this.#store, async (trx) => {
      const current = await this.#lock.first(trx, { key });
      if (current === undefined) {
        const inserted = await this.#insert.affected(trx, { key, holder, epoch: 1, expires_at: expiresAt });
        return inserted === 1 ? { key, holder, epoch: 1, expiresAt } : undefined;
      }
      const epoch = toNumber(current.epoch);
      if (current.holder !== holder && toMillis(current.expires_at) > now && takeOver !== true)
        return undefined;
      const grant = { key, holder, epoch: epoch + 1, expires_at: expiresAt };
      const updated = await this.#take.affected(trx, { ...grant, from: epoch });
      if (updated !== 1) return undefined;
      const lease = { key, holder, epoch: epoch + 1, expiresAt };
      this.#granted(trx, lease);
      return lease;
    });
  }

  /**
   * Notes a grant made in the write transaction `trx`: the fences it found current are forgotten, and
   * the new one is known current there (nobody else writes the row before the transaction ends), so the
   * writes under it that join the same transaction check nothing more.
   */
  #granted(trx: Kysely<AgbossDatabase>, fence: Fence): void {
    const transactions = this.#store.transactions;
    if (transactions === undefined) return;
    transactions.leasesChanged(trx);
    const note = transactions.fenceChecked(trx, fence);
    if (typeof note === "function") note();
  }

  async renew(args: { fence: Fence; now: number; ttlMs: number }): Promise<boolean> {
    const { fence, now, ttlMs } = args;
    const updated = await inWriteTransaction(
      this.#store,
      (trx) => {
        // A holder whose checkpoint writes were not committed must not be told it may go on (a renewal
        // confirms the lease before an approved tool runs): see `WriteTransactions.applied`. Asked in the
        // transaction, as a fence check is, so a failure recorded while the renewal waited counts too.
        this.#store.transactions?.refuseAfterLostCommit(fence);
        return this.#renew.affected(trx, { key: fence.key, epoch: fence.epoch, expires_at: now + ttlMs });
      },
      fence,
    );
    return updated === 1;
  }

  async confirm(fence: Fence, now: number): Promise<boolean> {
    const transactions = this.#store.transactions;
    // Something of the holder's is held back or not committed yet: no answer without a write. The
    // caller renews instead, a fenced write that commits with (or after) it.
    if (transactions?.flushHeld(fence) !== undefined || transactions?.pendingUnder(fence) === true)
      return false;
    // A write of the fence that resolved and then did not commit fails the check, as it fails a write.
    transactions?.refuseAfterLostCommit(fence);
    const row = await this.#find.first(this.#store.db, { key: fence.key });
    return row !== undefined && toNumber(row.epoch) === fence.epoch && toMillis(row.expires_at) > now;
  }

  async release(fence: Fence): Promise<void> {
    // What the holder's checkpointer still holds back goes ahead of the release, under the lease: once
    // applied, the release's transaction waits for its commit (or, where commits are grouped, joins it
    // after it). A failure there is on the fence already; the release lands regardless.
    await this.#store.transactions?.flushHeld(fence)?.catch(() => undefined);
    // Not given the fence: a release must land even after a pass of it was lost (see `refuseAfterLostCommit`).
    await inWriteTransaction(this.#store, (trx) =>
      this.#expire.execute(trx, { key: fence.key, epoch: fence.epoch, expires_at: RELEASED_LEASE_EXPIRY }),
    );
  }

  async find(key: string): Promise<Lease | undefined> {
    const row = await this.#find.first(this.#store.db, { key });
    if (row === undefined) return undefined;
    return {
      key: row.key,
      holder: row.holder,
      epoch: toNumber(row.epoch),
      expiresAt: toMillis(row.expires_at),
    };
  }
}
