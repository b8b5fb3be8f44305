import type { ExecutionRecordRepository } from "../execution-record-repository.js";
import type { Fence } from "../fence.js";
import type { StoredExecution, StoredPauseAnswer } from "../stored-execution.js";
import { copy } from "./copy.js";
import type { MemoryLeaseRepository } from "./memory-lease-repository.js";

const key = (...parts: string[]) => JSON.stringify(parts);

/** {@link ExecutionRecordRepository} in memory. */
export class MemoryExecutionRecordRepository implements ExecutionRecordRepository {
  readonly #leases: MemoryLeaseRepository | undefined;
  readonly #executions = new Map<string, StoredExecution>();
  readonly #answers = new Map<string, StoredPauseAnswer>();

  /** Fenced saves are checked against `leases`; without them a fence is ignored. */
  constructor(leases?: MemoryLeaseRepository) {
    this.#leases = leases;
  }

  async save(
    execution: StoredExecution,
    fence?: Fence,
    options?: { readonly release?: boolean },
  ): Promise<void> {
    this.#leases?.assertCurrent(fence);
    this.#executions.set(key(execution.tenantId, execution.executionId), copy(execution));
    if (options?.release === true && fence !== undefined) this.#leases?.releaseNow(fence);
  }

  async findByTenantIdAndExecutionId(
    tenantId: string,
    executionId: string,
  ): Promise<StoredExecution | undefined> {
    const execution = this.#executions.get(key(tenantId, executionId));
    return execution === undefined ? undefined : copy(execution);
  }

  async listByTenantIdAndThreadId(tenantId: string, threadId: string): Promise<StoredExecution[]> {
    return [...this.#executions.values()]
      .filter((e) => e.tenantId === tenantId && e.threadId === threadId)
      .sort((a, b) => a.startedAt - b.startedAt || compare(a.executionId, b.executionId))
      .map(copy);
  }

  async listByStatus(
    statuses: readonly string[],
    limit: number,
    after?: { readonly updatedAt: number; readonly tenantId: string; readonly executionId: string },
  ): Promise<Omit<StoredExecution, "record">[]> {
    if (limit <= 0) return [];
    const isAfter = (e: StoredExecution) =>
      after === undefined ||
      e.updatedAt > after.updatedAt ||
      (e.updatedAt === after.updatedAt &&
        (compare(e.tenantId, after.tenantId) > 0 ||
          (e.tenantId === after.tenantId && compare(e.executionId, after.executionId) > 0)));
    return [...this.#executions.values()]
      .filter((e) => statuses.includes(e.status) && isAfter(e))
      .sort(
        (a, b) =>
          a.updatedAt - b.updatedAt ||
          compare(a.tenantId, b.tenantId) ||
          compare(a.executionId, b.executionId),
      )
      .slice(0, limit)
      .map(({ record: _record, ...keys }) => keys);
  }

  async savePauseAnswer(tenantId: string, rootExecutionId: string, answer: StoredPauseAnswer): Promise<void> {
    const id = key(tenantId, answer.idempotencyKey);
    if (this.#answers.has(id)) return;
    this.#answers.set(id, copy({ ...answer, tenantId, rootExecutionId }));
  }

  async findPauseAnswersByTenantIdAndRootExecutionId(
    tenantId: string,
    rootExecutionId: string,
  ): Promise<StoredPauseAnswer[]> {
    return [...this.#answers.values()]
      .filter((a) => a.tenantId === tenantId && a.rootExecutionId === rootExecutionId)
      .sort((a, b) => a.askedAt - b.askedAt || compare(a.idempotencyKey, b.idempotencyKey))
      .map(copy);
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
