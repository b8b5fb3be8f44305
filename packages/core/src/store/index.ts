// `@agboss/core/store`: what a store author implements and tests against. The contracts every store
// fulfils, the records they keep, the fencing that protects a tree's writes, and the in-memory stores
// (the reference implementation). Application code needs none of this beyond `Store`, `StoreFactory`
// and `memoryStore`, which `@agboss/core` exports too.
export type {
  BudgetCharge,
  BudgetLedgerKey,
  BudgetLedgerRepository,
  BudgetSpend,
} from "../budgets/budget-ledger-repository.js";
export { MemoryBudgetLedgerRepository } from "../budgets/memory-budget-ledger-repository.js";
export { StoreUnavailableError } from "../errors/app-errors.js";
export { PauseIdTakenError } from "../pauses/pause-errors.js";
export type {
  PauseAnswer,
  PauseDeadline,
  PauseDecision,
  PauseQuery,
  PauseRecord,
  ToolResult,
} from "../pauses/pause-record.js";
export { PauseAnswerer, PauseKind, PauseResolution, PauseStatus } from "../pauses/pause-status.js";
export type { PauseStep } from "../pauses/pause-step.js";
export type { PausedExecutionRepository } from "../pauses/paused-execution-repository.js";
export { ExecutionStatus } from "../records/execution-status.js";
export {
  CHECKPOINT_HISTORY_CONFIG_KEY,
  type CheckpointHistory,
  forgetKeptRead,
  forgetReadAhead,
  KEEP_READ_CONFIG_KEY,
  KEPT_READ_CONFIG_KEY,
  type KeepsReads,
  keepsLatestOnly,
  keptRead,
  knownToHaveNoCheckpoint,
  NO_CHECKPOINT_CONFIG_KEY,
  type ReadAhead,
  type ReadsAhead,
  readAheadOf,
  readToKeep,
} from "./checkpoint-history.js";
export type { ExecutionRecordRepository } from "./execution-record-repository.js";
export { FENCE_CONFIG_KEY, type Fence, fenceOf, LeaseLostError } from "./fence.js";
export type { Lease, LeaseRepository } from "./lease-repository.js";
export { RELEASED_LEASE_EXPIRY } from "./lease-repository.js";
export * from "./memory/index.js";
export type { Store, StoreContext, StoreFactory } from "./store.js";
export type { StoredExecution, StoredPauseAnswer } from "./stored-execution.js";
export type { ThreadRecord } from "./thread-record.js";
export type { ThreadRepository } from "./thread-repository.js";
