import { PauseStatus } from "@agboss/core";
import type { PauseRecord } from "@agboss/core/store";

/** A Pending pause with the smallest valid fields, for tests of the store's write path. */
export const pause = (pauseId: string): PauseRecord => ({
  tenantId: "t",
  pauseId,
  idempotencyKey: `key-${pauseId}`,
  threadId: "th",
  rootExecutionId: "r",
  executionId: "r",
  ownerId: "o",
  status: PauseStatus.Pending,
  resolution: undefined,
  isSent: false,
  channel: "c",
  answeredBy: "thread-owner",
  agent: "a",
  ask: {} as never,
  step: {} as never,
  answer: undefined,
  askedAt: 1,
  resolvedAt: undefined,
});

/** A thread record with the smallest valid fields. */
export const thread = (threadId: string) => ({
  tenantId: "t",
  threadId,
  ownerId: "o",
  workflowName: "w",
  latestExecutionId: "e",
  createdAt: 1,
  updatedAt: 1,
});

/** A running execution record with the smallest valid fields. */
export const execution = (executionId: string) => ({
  tenantId: "t",
  executionId,
  rootExecutionId: executionId,
  parentExecutionId: undefined,
  threadId: "th",
  workflowName: "w",
  status: "running",
  startedAt: 1,
  updatedAt: 1,
  record: {},
});
