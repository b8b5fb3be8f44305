import { PauseIdTakenError } from "../../pauses/pause-errors.js";
import type {
  PauseAnswer,
  PauseDeadline,
  PauseQuery,
  PauseRecord,
  ToolResult,
} from "../../pauses/pause-record.js";
import { PauseResolution, PauseStatus } from "../../pauses/pause-status.js";
import type { PausedExecutionRepository } from "../../pauses/paused-execution-repository.js";
import type { Fence } from "../fence.js";
import { copy } from "./copy.js";
import type { MemoryLeaseRepository } from "./memory-lease-repository.js";

const key = (tenantId: string, id: string) => JSON.stringify([tenantId, id]);
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * {@link PausedExecutionRepository} in memory. Every change checks its fence and its expected status
 * and writes in one synchronous step, so racing callers see exactly one winner.
 */
export class MemoryPausedExecutionRepository implements PausedExecutionRepository {
  readonly #leases: MemoryLeaseRepository;
  readonly #pauses = new Map<string, PauseRecord>();
  /** (tenantId, idempotencyKey) → pauseId. */
  readonly #byIdempotencyKey = new Map<string, string>();

  /** Fenced writes are checked against `leases`. */
  constructor(leases: MemoryLeaseRepository) {
    this.#leases = leases;
  }

  async findOrCreate(record: PauseRecord, fence?: Fence): Promise<PauseRecord> {
    const stored = copy(record);
    this.#leases.assertCurrent(fence);
    const existing = this.#byIdempotencyKey.get(key(record.tenantId, record.idempotencyKey));
    if (existing !== undefined) return copy(this.#pauses.get(key(record.tenantId, existing))!);
    if (this.#pauses.has(key(record.tenantId, record.pauseId))) {
      throw new PauseIdTakenError(record.pauseId);
    }
    this.#pauses.set(key(record.tenantId, record.pauseId), stored);
    this.#byIdempotencyKey.set(key(record.tenantId, record.idempotencyKey), record.pauseId);
    return copy(stored);
  }

  async findByTenantIdAndPauseId(tenantId: string, pauseId: string): Promise<PauseRecord | undefined> {
    const pause = this.#pauses.get(key(tenantId, pauseId));
    return pause === undefined ? undefined : copy(pause);
  }

  async findByTenantIdAndIdempotencyKey(
    tenantId: string,
    idempotencyKey: string,
  ): Promise<PauseRecord | undefined> {
    const pauseId = this.#byIdempotencyKey.get(key(tenantId, idempotencyKey));
    return pauseId === undefined ? undefined : this.findByTenantIdAndPauseId(tenantId, pauseId);
  }

  async list(query: PauseQuery): Promise<PauseRecord[]> {
    const matches = [...this.#pauses.values()]
      .filter(
        (p) =>
          p.tenantId === query.tenantId &&
          (query.statuses === undefined || query.statuses.includes(p.status)) &&
          (query.channel === undefined || p.channel === query.channel) &&
          (query.threadId === undefined || p.threadId === query.threadId) &&
          (query.ownerId === undefined || p.ownerId === query.ownerId) &&
          (query.rootExecutionId === undefined || p.rootExecutionId === query.rootExecutionId),
      )
      .sort((a, b) => a.askedAt - b.askedAt || (a.pauseId < b.pauseId ? -1 : a.pauseId > b.pauseId ? 1 : 0));
    return (query.limit === undefined ? matches : matches.slice(0, Math.max(0, query.limit))).map(copy);
  }

  async listResolvedBefore(args: {
    before: number;
    limit: number;
    after?: { readonly resolvedAt: number; readonly tenantId: string; readonly pauseId: string };
  }): Promise<PauseRecord[]> {
    if (!(args.limit >= 1)) return [];
    const { after } = args;
    const isAfter = (p: PauseRecord) =>
      after === undefined ||
      (p.resolvedAt as number) > after.resolvedAt ||
      (p.resolvedAt === after.resolvedAt &&
        (compare(p.tenantId, after.tenantId) > 0 ||
          (p.tenantId === after.tenantId && compare(p.pauseId, after.pauseId) > 0)));
    return [...this.#pauses.values()]
      .filter(
        (p) =>
          p.status === PauseStatus.Resolved &&
          p.resolvedAt !== undefined &&
          p.resolvedAt < args.before &&
          isAfter(p),
      )
      .sort(
        (a, b) =>
          (a.resolvedAt as number) - (b.resolvedAt as number) ||
          compare(a.tenantId, b.tenantId) ||
          compare(a.pauseId, b.pauseId),
      )
      .slice(0, Math.trunc(args.limit))
      .map(copy);
  }

  async listDueDeadlines(args: {
    now: number;
    limit: number;
    after?: { readonly deadlineAt: number; readonly tenantId: string; readonly pauseId: string };
  }): Promise<PauseRecord[]> {
    const { after } = args;
    return this.#dueBy(
      (p) => (p.status === PauseStatus.Pending ? p.deadline?.at : undefined),
      args,
      after && { at: after.deadlineAt, ...after },
    );
  }

  /**
   * The pauses `dueAt` gives a time for that is due by `now`, by that time, then tenantId, then pauseId,
   * from just after `after`, at most `limit`.
   */
  #dueBy(
    dueAt: (pause: PauseRecord) => number | undefined,
    args: { now: number; limit: number },
    after: { readonly at: number; readonly tenantId: string; readonly pauseId: string } | undefined,
  ): PauseRecord[] {
    if (!(args.limit >= 1)) return [];
    const due: { pause: PauseRecord; at: number }[] = [];
    for (const pause of this.#pauses.values()) {
      const at = dueAt(pause);
      if (at === undefined || at > args.now) continue;
      if (
        after !== undefined &&
        (at < after.at ||
          (at === after.at &&
            (compare(pause.tenantId, after.tenantId) < 0 ||
              (pause.tenantId === after.tenantId && compare(pause.pauseId, after.pauseId) <= 0))))
      ) {
        continue;
      }
      due.push({ pause, at });
    }
    return due
      .sort(
        (a, b) =>
          a.at - b.at ||
          compare(a.pause.tenantId, b.pause.tenantId) ||
          compare(a.pause.pauseId, b.pause.pauseId),
      )
      .slice(0, Math.trunc(args.limit))
      .map(({ pause }) => copy(pause));
  }

  async claimDeadline(
    tenantId: string,
    pauseId: string,
    args: { from: PauseDeadline; to: PauseDeadline | undefined },
  ): Promise<PauseRecord | undefined> {
    const current = this.#pauses.get(key(tenantId, pauseId));
    const deadline = current?.deadline;
    if (
      deadline === undefined ||
      deadline.at !== args.from.at ||
      deadline.reminders !== args.from.reminders
    ) {
      return undefined;
    }
    return this.#change(tenantId, pauseId, PauseStatus.Pending, {
      deadline: args.to === undefined ? undefined : { at: args.to.at, reminders: args.to.reminders },
    });
  }

  async markSent(
    tenantId: string,
    pauseId: string,
    fence?: Fence,
    channelRef?: unknown,
  ): Promise<PauseRecord | undefined> {
    return this.#change(
      tenantId,
      pauseId,
      PauseStatus.Pending,
      { isSent: true, ...(channelRef === undefined ? {} : { channelRef: structuredClone(channelRef) }) },
      fence,
    );
  }

  async resolve(
    tenantId: string,
    pauseId: string,
    answer: PauseAnswer,
    at: number,
    options: { resolution?: PauseResolution } = {},
  ): Promise<PauseRecord | undefined> {
    return this.#change(tenantId, pauseId, PauseStatus.Pending, {
      status: PauseStatus.Resolved,
      resolution: options.resolution ?? PauseResolution.Replied,
      answer: copy(answer),
      resolvedAt: at,
    });
  }

  async take(
    tenantId: string,
    pauseId: string,
    args: { at: number; answer?: PauseAnswer; resolution?: PauseResolution },
    fence?: Fence,
  ): Promise<PauseRecord | undefined> {
    const answer = args.answer === undefined ? undefined : copy(args.answer);
    this.#leases.assertCurrent(fence);
    if (answer !== undefined) {
      const decided = this.#change(tenantId, pauseId, PauseStatus.Pending, {
        status: PauseStatus.Taken,
        resolution: args.resolution ?? PauseResolution.Decided,
        answer,
        resolvedAt: args.at,
      });
      if (decided !== undefined) return decided;
    }
    return this.#change(tenantId, pauseId, PauseStatus.Resolved, { status: PauseStatus.Taken });
  }

  async saveToolResult(
    tenantId: string,
    pauseId: string,
    result: ToolResult,
    fence?: Fence,
  ): Promise<PauseRecord | undefined> {
    this.#leases.assertCurrent(fence);
    const current = this.#pauses.get(key(tenantId, pauseId));
    if (current === undefined || current.status !== PauseStatus.Taken) return undefined;
    if (current.toolResult !== undefined) return copy(current);
    return this.#change(tenantId, pauseId, PauseStatus.Taken, { toolResult: copy(result) });
  }

  async cancelByTenantIdAndPauseId(
    tenantId: string,
    pauseId: string,
    args: { resolution: PauseResolution; at: number; answer?: PauseAnswer; withdrawalOwedAt?: number },
    fence?: Fence,
  ): Promise<PauseRecord | undefined> {
    const sent = this.#pauses.get(key(tenantId, pauseId))?.isSent === true;
    return this.#change(
      tenantId,
      pauseId,
      PauseStatus.Pending,
      {
        status: PauseStatus.Cancelled,
        resolution: args.resolution,
        resolvedAt: args.at,
        ...(args.answer === undefined ? {} : { answer: args.answer }),
        deadline: undefined,
        withdrawalOwedAt: sent ? undefined : args.withdrawalOwedAt,
      },
      fence,
    );
  }

  async listOwedWithdrawals(args: {
    now: number;
    limit: number;
    after?: { readonly owedAt: number; readonly tenantId: string; readonly pauseId: string };
  }): Promise<PauseRecord[]> {
    const { after } = args;
    return this.#dueBy(
      (p) => (p.status === PauseStatus.Cancelled && !p.isSent ? p.withdrawalOwedAt : undefined),
      args,
      after && { at: after.owedAt, ...after },
    );
  }

  async claimWithdrawal(
    tenantId: string,
    pauseId: string,
    channelRef?: unknown,
  ): Promise<PauseRecord | undefined> {
    if (this.#pauses.get(key(tenantId, pauseId))?.isSent !== false) return undefined;
    return this.#change(tenantId, pauseId, PauseStatus.Cancelled, {
      isSent: true,
      withdrawalOwedAt: undefined,
      ...(channelRef === undefined ? {} : { channelRef: structuredClone(channelRef) }),
    });
  }

  async forgoWithdrawal(tenantId: string, pauseId: string): Promise<PauseRecord | undefined> {
    const current = this.#pauses.get(key(tenantId, pauseId));
    if (current === undefined || current.isSent || current.withdrawalOwedAt === undefined) return undefined;
    return this.#change(tenantId, pauseId, PauseStatus.Cancelled, { withdrawalOwedAt: undefined });
  }

  async deleteResolvedBefore(cutoff: number, limit = Number.POSITIVE_INFINITY): Promise<number> {
    let deleted = 0;
    for (const [id, pause] of this.#pauses) {
      if (deleted >= limit) break;
      const closed = pause.status === PauseStatus.Taken || pause.status === PauseStatus.Cancelled;
      if (!closed || pause.resolvedAt === undefined || pause.resolvedAt >= cutoff) continue;
      this.#pauses.delete(id);
      this.#byIdempotencyKey.delete(key(pause.tenantId, pause.idempotencyKey));
      deleted += 1;
    }
    return deleted;
  }

  #change(
    tenantId: string,
    pauseId: string,
    from: PauseStatus,
    changes: Partial<PauseRecord>,
    fence?: Fence,
  ): PauseRecord | undefined {
    this.#leases.assertCurrent(fence);
    const current = this.#pauses.get(key(tenantId, pauseId));
    if (current === undefined || current.status !== from) return undefined;
    const next: PauseRecord = { ...current, ...changes };
    this.#pauses.set(key(tenantId, pauseId), next);
    return copy(next);
  }
}
