export { MemoryCheckpointSaver } from "./memory-checkpoint-saver.js";
export { MemoryExecutionRecordRepository } from "./memory-execution-record-repository.js";
export { MemoryLeaseRepository } from "./memory-lease-repository.js";
export { MemoryPausedExecutionRepository } from "./memory-paused-execution-repository.js";
export { MemoryStore, memoryStore } from "./memory-store.js";
export { MemoryThreadRepository } from "./memory-thread-repository.js";
