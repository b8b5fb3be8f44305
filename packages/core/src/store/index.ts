export type { PauseAnswer, PauseQuery, PauseRecord, ToolResult } from "../pauses/pause-record.js";
export type { PausedExecutionRepository } from "../pauses/paused-execution-repository.js";
export type { ExecutionRecordRepository } from "./execution-record-repository.js";
export { FENCE_CONFIG_KEY, type Fence, fenceOf, LeaseLostError } from "./fence.js";
export type { Lease, LeaseRepository } from "./lease-repository.js";
export type { Store, StoreContext, StoreFactory } from "./store.js";
export type { StoredExecution, StoredPauseAnswer } from "./stored-execution.js";
export type { ThreadRecord } from "./thread-record.js";
export type { ThreadRepository } from "./thread-repository.js";
