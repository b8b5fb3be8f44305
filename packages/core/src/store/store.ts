import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { BudgetLedgerRepository } from "../budgets/budget-ledger-repository.js";
import type { Logger } from "../logging/logger.js";
import type { PausedExecutionRepository } from "../pauses/paused-execution-repository.js";
import type { Clock } from "../time/clock.js";
import type { ExecutionRecordRepository } from "./execution-record-repository.js";
import type { LeaseRepository } from "./lease-repository.js";
import type { ThreadRepository } from "./thread-repository.js";

/**
 * Everything an application keeps: one backend holds all of it, so a pass's writes share its
 * connection. The in-memory store, `@agboss/store-sqlite` and `@agboss/store-postgres` implement it.
 */
export interface Store {
  /** A short name for logs and errors, e.g. `sqlite:/var/lib/app/agboss.sqlite`. */
  readonly name: string;
  readonly threads: ThreadRepository;
  readonly executions: ExecutionRecordRepository;
  readonly leases: LeaseRepository;
  readonly pauses: PausedExecutionRepository;
  /** Budget counters shared by every instance on the store: charges add atomically. */
  readonly budgets: BudgetLedgerRepository;
  /**
   * The LangGraph checkpointer on the same backend. Its `put` and `putWrites` honour the {@link Fence}
   * found under `config.configurable.agboss_fence`: once a newer holder took the lease, such a write
   * stores nothing. It rejects with `LeaseLostError`, or, where the store checks the fence as the write
   * reaches the database with the pass's next statement (Postgres), it resolves and that statement, or
   * the holder's next write that waits for a commit, is refused. The runtime's graphs read only the latest
   * checkpoint of each thread and namespace and say so under `config.configurable.agboss_checkpoint_history`
   * (`"latest"`): a checkpointer may then delete what each put supersedes, in the put's transaction.
   */
  readonly checkpointer: BaseCheckpointSaver;
  /**
   * Runs `work` as one unit: every write it makes through this store's repositories lands in one
   * transaction (one commit), or none does, and its reads see those writes. Keep `work` to this store's
   * calls: nothing else should be awaited inside it (on SQLite it holds the write lock). A unit that
   * meets a transient fault runs again whole, so `work` must be safe to run again. The in-memory store
   * runs `work` as it is (its writes land at once; a throw part-way keeps the writes made before it).
   * A read inside `work` of a thread an execution is moving finds it as committed: what that execution's
   * pass holds back in memory stays out of the unit (the SQL stores), to commit on its own.
   */
  atomically<T>(work: () => Promise<T>): Promise<T>;
  /**
   * How many trees the recovery sweep may carry on at once on this store. Default 1: right where
   * writes queue behind one another anyway (SQLite keeps one writer per file, and side by side they
   * only add work). A store whose database runs writes side by side (Postgres: 4) lets a backlog keep
   * both the process and the server busy.
   */
  readonly recoveryConcurrency?: number;
  /** Releases connections. Called by `app.close()` for a store the application opened. */
  close(): Promise<void>;
}

/** What a store factory is given when an application opens its store. */
export interface StoreContext {
  /** The application's name, for a default file name. */
  readonly appName: string;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** Opens a store for an application; `createApp` calls it once. */
export type StoreFactory = (context: StoreContext) => Store | Promise<Store>;
