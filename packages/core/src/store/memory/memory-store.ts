import { MemoryBudgetLedgerRepository } from "../../budgets/memory-budget-ledger-repository.js";
import type { Store, StoreFactory } from "../store.js";
import { MemoryCheckpointSaver } from "./memory-checkpoint-saver.js";
import { MemoryExecutionRecordRepository } from "./memory-execution-record-repository.js";
import { MemoryLeaseRepository } from "./memory-lease-repository.js";
import { MemoryPausedExecutionRepository } from "./memory-paused-execution-repository.js";
import { MemoryThreadRepository } from "./memory-thread-repository.js";

/**
 * Every store contract in memory: the reference implementation, for tests and examples. Nothing
 * survives the process; two applications share state only by sharing one instance.
 *
 * @example
 * const store = new MemoryStore();
 * const app = await createApp(App, { store: () => store });
 */
export class MemoryStore implements Store {
  readonly name: string = "memory";
  readonly threads = new MemoryThreadRepository();
  readonly leases = new MemoryLeaseRepository();
  readonly executions = new MemoryExecutionRecordRepository(this.leases);
  readonly pauses = new MemoryPausedExecutionRepository(this.leases);
  readonly checkpointer = new MemoryCheckpointSaver(this.leases);
  readonly budgets = new MemoryBudgetLedgerRepository();

  /** Runs `work` as it is: each write lands at once (there is no transaction to roll back). */
  atomically<T>(work: () => Promise<T>): Promise<T> {
    return work();
  }

  /** Nothing to release. */
  async close(): Promise<void> {}
}

/** A factory that opens a fresh {@link MemoryStore} for each application. */
export function memoryStore(): StoreFactory {
  return () => new MemoryStore();
}
