import { LeaseLostError } from "@agboss/core";
import type { Fence } from "@agboss/core/store";
import { type Expression, type Kysely, type RawBuilder, sql } from "kysely";
import type { PreparedQuery, SlotOf } from "./prepared-query.js";
import type { AgbossDatabase } from "./schema/agboss-database.js";
import { inAppliedWrite, inWriteStatement, type StoreDatabase } from "./write-transactions.js";

// One-statement fenced writes, for dialects with data-modifying `with` clauses (`writableCtes`,
// Postgres): the statement's first clause, `fence`, reads the lease row and locks it for share while
// the fence's epoch still holds it; every write of the statement is conditioned on `FENCED`; the
// statement answers `fenced`, so the caller can tell a refused write from one that found nothing to do.

/** The arguments every fenced statement takes: the fence's key and epoch. @internal */
export interface FenceArgs {
  key: string;
  epoch: number;
}

/** Whether the statement's `fence` clause found the lease held by the fence (true when unfenced). @internal */
export const FENCED = sql<boolean>`exists (select 1 from fence)`;

/** The text a statement ending in {@link FENCE_ASSERTED} fails with when its fence no longer held the lease. */
const FENCE_LOST_TEXT = "agboss: the fence no longer holds the lease";

/**
 * True when the statement's `fence` clause found the lease held by the fence, and otherwise an error
 * that fails the statement (a cast of {@link FENCE_LOST_TEXT} to an integer, which the server cannot
 * fold away before it runs: it reads the `fence` clause), so a statement sent without its result being
 * read still refuses the rest of its transaction when its fence is lost. See {@link fenceAssertionFailed}.
 * @internal
 */
export const FENCE_ASSERTED = sql<boolean>`((select ${sql.lit(FENCE_LOST_TEXT)} where not exists (select 1 from fence))::integer is null)`;

/** Whether `error` is the server's refusal of a statement ending in {@link FENCE_ASSERTED} whose fence was lost. @internal */
export function fenceAssertionFailed(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === "22P02" && typeof message === "string" && message.includes(FENCE_LOST_TEXT);
}

/** `value::type`: the statement's parameters are typed where nothing else in it says what they are. @internal */
export function typed<T>(value: T, type: string): RawBuilder<T> {
  return sql<T>`${value}::${sql.raw(type)}`;
}

/** `unnest(a::t[], b::u[], …) as u(columns)`: arrays of equal length read as rows, aliased `u`. @internal */
export function unnest<TRow>(arrays: readonly (readonly [unknown, string])[], columns: string) {
  const args = sql.join(arrays.map(([value, type]) => typed(value, type)));
  return sql<TRow>`unnest(${args})`.as<"u">(sql`u(${sql.raw(columns)})` as Expression<unknown>);
}

/**
 * The statement's first clause: `fence`, the lease row locked for share while the fence holds it; for
 * an unfenced write, one row that always holds. @internal
 */
export function withFence<TArgs extends FenceArgs>(
  store: StoreDatabase,
  fenced: boolean,
  slot: SlotOf<TArgs>,
) {
  const db = store.db;
  return fenced
    ? db.with(
        (cte) => cte("fence").materialized(),
        (qb) =>
          qb
            .selectFrom("agboss_leases")
            .select(sql<number>`1`.as("one"))
            .where("key", "=", slot("key"))
            .where("epoch", "=", slot("epoch"))
            .forShare(),
      )
    : db.with("fence", (qb) => qb.selectNoFrom(sql<number>`1`.as("one")));
}

/** The fence's key and epoch as a fenced statement's arguments. @internal */
export function fenceArgs(fence: Fence | undefined): FenceArgs {
  return { key: fence?.key ?? "", epoch: fence?.epoch ?? 0 };
}

/**
 * Runs an idempotent fenced statement (its last clause `select FENCED as fenced`) as its own
 * transaction (see `WriteTransactions.statement`), and throws {@link LeaseLostError} when the fence no
 * longer held the lease: then the statement wrote nothing. With `applied`, a checkpoint write of a pass,
 * it resolves once run in the fence's open transaction (see `WriteTransactions.applied`), or, sent
 * with that transaction's next statement (`checked`, `asserted`), once handed to the driver: a lost
 * fence then fails that statement, or the `commit`, and the pass with {@link LeaseLostError}.
 * Otherwise it joins that transaction, if any, and resolves once committed. @internal
 */
export async function runFenced<TArgs>(
  store: StoreDatabase,
  query: PreparedQuery<TArgs, { fenced: boolean }>,
  args: TArgs,
  fence: Fence | undefined,
  options?: {
    readonly applied?: boolean;
    /** The write's caller was told it was done before it was issued (see `WriteOptions.toldDone`). */
    readonly toldDone?: boolean;
    /**
     * The same writes without the fence and returning no rows, for an `applied` write whose transaction
     * has found the fence current already: the lease row is locked there until the transaction ends,
     * so nothing needs checking, and nothing is read back, so where the dialect can
     * (`deferUnreadStatement`) the statement goes to the server with the transaction's next one. If
     * the server refuses it there (the driver marks the error with `markHeldRefused`), the pass is lost
     * at it (see `PassTransactions`): its pending writes fail with that error and the holder's later
     * writes are refused, as after any lost commit.
     */
    readonly checked?: () => PreparedQuery<TArgs>;
    /**
     * The same writes, fenced, ending in {@link FENCE_ASSERTED} instead of answering `fenced`: for the
     * first `applied` write of a transaction, which then need not wait for its answer either. It goes
     * with the transaction's next statement or its `commit`; a lost fence fails that one, the pass is
     * lost there with {@link LeaseLostError}, and nothing of the transaction commits. Whatever runs after
     * it in the transaction runs only if its fence held, so the transaction counts the fence as checked.
     */
    readonly asserted?: () => PreparedQuery<TArgs>;
  },
): Promise<void> {
  if (fence === undefined) {
    await inWriteStatement(store, (db) => query.first(db, args));
    return;
  }
  const deferred = options?.applied === true && store.capabilities.deferUnreadStatement !== undefined;
  const checked = deferred ? options?.checked : undefined;
  const asserted = deferred ? options?.asserted : undefined;
  // Checked in the work, so a write run again in a new transaction (after a fault) is checked again.
  const write = async (db: Kysely<AgbossDatabase>) => {
    // Asked on every run: a pass of this fence may have been lost while the write waited or failed.
    store.transactions?.refuseAfterLostCommit(fence);
    const noted = store.transactions?.fenceChecked(db, fence);
    if (noted === true && checked !== undefined) {
      await checked().unread(store, db, args);
      return;
    }
    // In a pass transaction only: a unit of work's caller is told of its writes' failure at its commit.
    if (
      typeof noted === "function" &&
      asserted !== undefined &&
      store.transactions?.current() === undefined
    ) {
      await asserted()
        .unread(store, db, args)
        .catch((error: unknown) => {
          throw fenceAssertionFailed(error) ? new LeaseLostError(fence, { cause: error }) : error;
        });
      noted();
      return;
    }
    const row = await query.first(db, args);
    if (row?.fenced !== true) throw new LeaseLostError(fence);
    // The statement locked the lease row for share: a later write in the same transaction need not.
    if (typeof noted === "function") noted();
  };
  // Where commits are grouped, a write that resolved before its commit is not run again after a fault
  // (see `WriteTransactions.applied`): there a one-statement write waits for its commit.
  const applied = options?.applied === true && !store.capabilities.groupCommit;
  await (applied
    ? inAppliedWrite(store, fence, write, { toldDone: options?.toldDone === true })
    : inWriteStatement(store, write, fence));
}
