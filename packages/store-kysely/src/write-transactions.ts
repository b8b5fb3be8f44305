import { type Fence, LeaseLostError } from "@agboss/core";
import { type Kysely, sql } from "kysely";
import type { AgbossDatabase } from "./schema/agboss-database.js";
import { toNumber } from "./schema/columns.js";
import type { StoreDialectCapabilities } from "./store-dialect-capabilities.js";
import { openWriteGate, type WriteGate } from "./write-gate.js";

/** What the repositories share: one database, its dialect's capabilities and its write gate. @internal */
export interface StoreDatabase {
  readonly db: Kysely<AgbossDatabase>;
  readonly capabilities: StoreDialectCapabilities;
  readonly writeGate?: WriteGate | undefined;
}

/**
 * Runs `work` in one write transaction, begun the way the dialect wants, on one reserved connection;
 * commits when it returns and rolls back when it throws. @internal
 */
export function inWriteTransaction<T>(
  store: StoreDatabase,
  work: (trx: Kysely<AgbossDatabase>) => Promise<T>,
): Promise<T> {
  const gate = store.writeGate ?? openWriteGate;
  return gate(() =>
    store.db.connection().execute(async (connection) => {
      await sql.raw(store.capabilities.beginWriteTransaction).execute(connection);
      let result: T;
      try {
        result = await work(connection);
      } catch (error) {
        await sql`rollback`.execute(connection);
        throw error;
      }
      await sql`commit`.execute(connection);
      return result;
    }),
  );
}

/**
 * Throws {@link LeaseLostError} unless the lease row still carries the fence's epoch. Call it inside
 * the write transaction, before writing. @internal
 */
export async function assertFence(
  trx: Kysely<AgbossDatabase>,
  capabilities: StoreDialectCapabilities,
  fence: Fence | undefined,
): Promise<void> {
  if (fence === undefined) return;
  let query = trx.selectFrom("agboss_leases").select("epoch").where("key", "=", fence.key);
  if (capabilities.lockRowsForUpdate) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (row === undefined || toNumber(row.epoch) !== fence.epoch) throw new LeaseLostError(fence);
}
