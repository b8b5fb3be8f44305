import type { Fence } from "../store/fence.js";
import type { PauseAnswer, PauseDeadline, PauseQuery, PauseRecord, ToolResult } from "./pause-record.js";
import type { PauseResolution } from "./pause-status.js";

/**
 * The pause records of an application. Every status change is one atomic conditional update: of two
 * callers racing on one pause, exactly one gets the record back, the other undefined.
 *
 * Writes made by a pass that moves a tree carry its {@link Fence} and are refused with a
 * `LeaseLostError` once a newer holder took the tree's lease.
 */
export interface PausedExecutionRepository {
  /** Inserts `record` unless one with its (tenantId, idempotencyKey) exists; returns the stored one. */
  findOrCreate(record: PauseRecord, fence?: Fence): Promise<PauseRecord>;
  /** The pause, or undefined. */
  findByTenantIdAndPauseId(tenantId: string, pauseId: string): Promise<PauseRecord | undefined>;
  /** The pause of a step, or undefined. */
  findByTenantIdAndIdempotencyKey(tenantId: string, idempotencyKey: string): Promise<PauseRecord | undefined>;
  /** Pauses matching the query, oldest asked first. */
  list(query: PauseQuery): Promise<PauseRecord[]>;
  /**
   * Resolved pauses (answered, not yet taken) of every tenant whose `resolvedAt` is before `before`,
   * oldest resolved first (ties by tenantId, then pauseId), at most `limit` (none for a limit below 1).
   * Never a Pending, Taken or Cancelled pause. For the recovery sweep: an answer nobody has taken
   * up yet, however many other executions are waiting.
   */
  listResolvedBefore(args: {
    before: number;
    limit: number;
    /** Only the pauses after this one in that order: the next page of the sweep. */
    after?: { readonly resolvedAt: number; readonly tenantId: string; readonly pauseId: string };
  }): Promise<PauseRecord[]>;
  /**
   * Sets `isSent` (and `channelRef`, when given) on a Pending pause; returns the updated record, or
   * undefined when not Pending.
   */
  markSent(
    tenantId: string,
    pauseId: string,
    fence?: Fence,
    channelRef?: unknown,
  ): Promise<PauseRecord | undefined>;
  /**
   * Pending pauses (of every tenant) whose deadline is due at `now` or before, earliest first (ties by
   * tenantId, then pauseId), at most `limit` (none for a limit below 1). For the recovery sweep.
   */
  listDueDeadlines(args: {
    now: number;
    limit: number;
    /** Only the pauses after this one in that order: the next page of the sweep. */
    after?: { readonly deadlineAt: number; readonly tenantId: string; readonly pauseId: string };
  }): Promise<PauseRecord[]>;
  /**
   * Moves a Pending pause's deadline from `from` to `to` (undefined: none left) in one conditional
   * update: of two sweeps claiming the same deadline, exactly one gets the record back, the other
   * undefined (also when the pause is no longer Pending or its deadline is no longer `from`).
   */
  claimDeadline(
    tenantId: string,
    pauseId: string,
    args: { from: PauseDeadline; to: PauseDeadline | undefined },
  ): Promise<PauseRecord | undefined>;
  /**
   * Pending → Resolved with the answer (resolution Replied, or the one given: Escalated or Expired for a
   * deadline); undefined when the pause was not Pending.
   */
  resolve(
    tenantId: string,
    pauseId: string,
    answer: PauseAnswer,
    at: number,
    options?: { resolution?: PauseResolution },
  ): Promise<PauseRecord | undefined>;
  /**
   * Resolved → Taken (or Pending → Taken with `answer` and resolution Decided, for a channel that decided
   * at once); undefined when the pause was in neither state.
   */
  take(
    tenantId: string,
    pauseId: string,
    args: { at: number; answer?: PauseAnswer; resolution?: PauseResolution },
    fence?: Fence,
  ): Promise<PauseRecord | undefined>;
  /**
   * Keeps what the tool call of a Taken pause returned (`toolResult`), unless one is kept already: the
   * first result stays. Returns the stored record, or undefined when the pause is not Taken. Fenced: a
   * holder that lost the tree's lease cannot record a result.
   */
  saveToolResult(
    tenantId: string,
    pauseId: string,
    result: ToolResult,
    fence?: Fence,
  ): Promise<PauseRecord | undefined>;
  /**
   * Pending → Cancelled with the resolution (and `answer`, when given: what withdrew it); undefined
   * when the pause was not Pending. Its deadline goes; `withdrawalOwedAt`, when given, is kept as the
   * pause's {@link PauseRecord.withdrawalOwedAt} if the pause is not marked sent in that same update.
   */
  cancelByTenantIdAndPauseId(
    tenantId: string,
    pauseId: string,
    args: { resolution: PauseResolution; at: number; answer?: PauseAnswer; withdrawalOwedAt?: number },
    fence?: Fence,
  ): Promise<PauseRecord | undefined>;
  /**
   * Cancelled pauses not marked sent (of every tenant) whose withdrawal is owed at `now` or before,
   * earliest first (ties by tenantId, then pauseId), at most `limit` (none for a limit below 1). For the
   * recovery sweep, which claims each ({@link claimWithdrawal}) and tells its channel.
   */
  listOwedWithdrawals(args: {
    now: number;
    limit: number;
    /** Only the pauses after this one in that order: the next page of the sweep. */
    after?: { readonly owedAt: number; readonly tenantId: string; readonly pauseId: string };
  }): Promise<PauseRecord[]>;
  /**
   * Marks a Cancelled pause sent (with `channelRef`, when given) and drops any withdrawal owed on it, in
   * one conditional update: the caller tells the channel it is withdrawn. Of two callers (the step back
   * from its `send`, the sweep) exactly one gets the record back; undefined when the pause is not
   * Cancelled or is marked sent already (whoever marked it tells). Not fenced: the step that claims it
   * lost its lease to whoever cancelled.
   */
  claimWithdrawal(tenantId: string, pauseId: string, channelRef?: unknown): Promise<PauseRecord | undefined>;
  /**
   * Drops the withdrawal owed on a Cancelled pause not marked sent, leaving it unsent: its `send` failed,
   * so its channel is never told. Returns the record, or undefined when nothing was owed.
   */
  forgoWithdrawal(tenantId: string, pauseId: string): Promise<PauseRecord | undefined>;
  /**
   * Removes Taken and Cancelled pauses resolved before `cutoff`, at most `limit` of them (all when it is
   * not given); returns how many. Never Pending or Resolved.
   */
  deleteResolvedBefore(cutoff: number, limit?: number): Promise<number>;
}
