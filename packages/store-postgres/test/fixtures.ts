import { randomUUID } from "node:crypto";
import { PauseAnswerer, PauseStatus, type Store } from "@agboss/core";
import { FENCE_CONFIG_KEY, type Fence, type PauseRecord } from "@agboss/core/store";

/** A LangGraph checkpoint, typed through the store's own checkpointer. */
type TestCheckpoint = Parameters<Store["checkpointer"]["put"]>[1];

/** A Pending, unsent pause with fresh ids. */
export function pause(overrides: Partial<PauseRecord> = {}): PauseRecord {
  return {
    tenantId: "acme",
    pauseId: `pause-${randomUUID()}`,
    idempotencyKey: `step-${randomUUID()}`,
    threadId: "thread-1",
    rootExecutionId: "root-1",
    executionId: "root-1",
    ownerId: "alice",
    status: PauseStatus.Pending,
    resolution: undefined,
    isSent: false,
    channel: "approvals",
    answeredBy: PauseAnswerer.ThreadOwner,
    agent: "refunds",
    ask: { tool: "refund", args: { amount: 120 } } as never,
    step: { node: "agent", visit: 1 } as never,
    answer: undefined,
    askedAt: 1_000,
    resolvedAt: undefined,
    ...overrides,
  };
}

let sequence = 0;

/** A version-4 checkpoint holding `values`; ids sort in creation order. */
export function checkpoint(values: Record<string, unknown>): TestCheckpoint {
  return {
    v: 4,
    id: `${String(++sequence).padStart(10, "0")}-${randomUUID()}`,
    ts: new Date(0).toISOString(),
    channel_values: { ...values },
    channel_versions: Object.fromEntries(Object.keys(values).map((k) => [k, 1])),
    versions_seen: {},
  };
}

/** A checkpointer config for `threadId`, under `fence` and after `parentId` when given. */
export function checkpointConfig(threadId: string, fence?: Fence, parentId?: string) {
  return {
    configurable: {
      thread_id: threadId,
      checkpoint_ns: "",
      ...(parentId === undefined ? {} : { checkpoint_id: parentId }),
      ...(fence === undefined ? {} : { [FENCE_CONFIG_KEY]: fence }),
    },
  };
}

/** Metadata for a checkpoint put. */
export const META = { source: "loop" as const, step: 1, parents: {} };
