import type { ThreadRecord } from "./thread-record.js";

/** Conversations by tenant and thread id. */
export interface ThreadRepository {
  /** The thread, or undefined. */
  findByTenantIdAndThreadId(tenantId: string, threadId: string): Promise<ThreadRecord | undefined>;
  /** Inserts the thread or replaces the stored one with the same (tenantId, threadId). */
  save(thread: ThreadRecord): Promise<void>;
}
