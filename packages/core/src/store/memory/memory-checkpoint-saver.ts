import {
  type ChannelVersions,
  type Checkpoint,
  type CheckpointMetadata,
  MemorySaver,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { fenceOf } from "../fence.js";
import type { MemoryLeaseRepository } from "./memory-lease-repository.js";

type RunnableConfig = Parameters<MemorySaver["put"]>[0];

/**
 * LangGraph's `MemorySaver` with fencing: `put` and `putWrites` check the fence under
 * `config.configurable.agboss_fence` against the leases, synchronously, before delegating, and throw
 * `LeaseLostError` once a newer holder took the lease.
 */
export class MemoryCheckpointSaver extends MemorySaver {
  readonly #leases: MemoryLeaseRepository;

  /** Fenced writes are checked against `leases`. */
  constructor(leases: MemoryLeaseRepository, serde?: SerializerProtocol) {
    super(serde);
    this.#leases = leases;
  }

  override put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    _newVersions?: ChannelVersions,
  ): Promise<RunnableConfig> {
    try {
      this.#leases.assertCurrent(fenceOf(config));
    } catch (error) {
      return Promise.reject(error);
    }
    return super.put(config, checkpoint, metadata);
  }

  override putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    try {
      this.#leases.assertCurrent(fenceOf(config));
    } catch (error) {
      return Promise.reject(error);
    }
    return super.putWrites(config, writes, taskId, taskPath);
  }
}
