import type { ThreadRecord } from "../thread-record.js";
import type { ThreadRepository } from "../thread-repository.js";
import { copy } from "./copy.js";

/** {@link ThreadRepository} in memory. */
export class MemoryThreadRepository implements ThreadRepository {
  readonly #threads = new Map<string, ThreadRecord>();

  async findByTenantIdAndThreadId(tenantId: string, threadId: string): Promise<ThreadRecord | undefined> {
    const thread = this.#threads.get(JSON.stringify([tenantId, threadId]));
    return thread === undefined ? undefined : copy(thread);
  }

  async save(thread: ThreadRecord): Promise<void> {
    this.#threads.set(JSON.stringify([thread.tenantId, thread.threadId]), copy(thread));
  }
}
