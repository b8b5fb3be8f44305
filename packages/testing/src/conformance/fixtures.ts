import { randomUUID } from "node:crypto";
import { PauseAnswerer, PauseStatus, type Store } from "@agboss/core";
import type { PauseRecord, StoredExecution, ThreadRecord } from "@agboss/core/store";

/** A LangGraph checkpoint, typed through the store's own checkpointer. */
export type TestCheckpoint = Parameters<Store["checkpointer"]["put"]>[1];

/** JSON with every kind of value a JSON column must give back unchanged. */
export const RICH_JSON = Object.freeze({
  text: 'Grüße, 世界 — "quoted" \\ back\nslash',
  integer: 42,
  negative: -7,
  float: 3.25,
  big: 2 ** 52,
  yes: true,
  no: false,
  nothing: null,
  list: [1, "two", { three: [3] }, []],
  nested: { deeper: { deepest: { empty: {} } } },
});

/** A unique id with a readable prefix. */
export function uid(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

/**
 * Any JSON where a record field is typed for core (a pause's ask, step or decision): a store keeps
 * these as JSON it does not read, and the suite checks that any JSON round-trips unchanged.
 */
export function json<T>(value: unknown): T {
  return value as T;
}

/** A Pending, unsent pause with fresh ids; `overrides` replace any field. */
export function pauseRecord(overrides: Partial<PauseRecord> = {}): PauseRecord {
  return {
    tenantId: "tenant-a",
    pauseId: uid("pause"),
    idempotencyKey: uid("step"),
    threadId: "thread-1",
    rootExecutionId: "root-1",
    executionId: "root-1",
    ownerId: "owner-1",
    status: PauseStatus.Pending,
    resolution: undefined,
    isSent: false,
    channel: "approvals",
    answeredBy: PauseAnswerer.ThreadOwner,
    agent: "refunds",
    ask: json({ tool: "refund", args: { amount: 120, currency: "EUR" } }),
    step: json({ node: "agent", visit: 1, callId: "call-1" }),
    answer: undefined,
    askedAt: 1_000,
    resolvedAt: undefined,
    ...overrides,
  };
}

/** An execution record with fresh ids; `overrides` replace any field. */
export function storedExecution(overrides: Partial<StoredExecution> = {}): StoredExecution {
  const executionId = overrides.executionId ?? uid("exec");
  return {
    tenantId: "tenant-a",
    executionId,
    rootExecutionId: executionId,
    parentExecutionId: undefined,
    threadId: "thread-1",
    workflowName: "refund",
    status: "running",
    startedAt: 1_000,
    updatedAt: 1_000,
    record: { steps: [{ node: "agent" }] },
    ...overrides,
  };
}

/** A thread record; `overrides` replace any field. */
export function threadRecord(overrides: Partial<ThreadRecord> = {}): ThreadRecord {
  return {
    tenantId: "tenant-a",
    threadId: uid("thread"),
    ownerId: "owner-1",
    workflowName: "refund",
    latestExecutionId: "exec-1",
    createdAt: 1_000,
    updatedAt: 1_000,
    ...overrides,
  };
}

let checkpointSequence = 0;

/** A version-4 checkpoint holding `values`, every channel at version 1; ids sort in creation order, as LangGraph's do. */
export function checkpoint(values: Record<string, unknown> = { messages: ["hello"] }): TestCheckpoint {
  return {
    v: 4,
    id: `${String(++checkpointSequence).padStart(10, "0")}-${randomUUID()}`,
    ts: new Date(0).toISOString(),
    channel_values: { ...values },
    channel_versions: Object.fromEntries(Object.keys(values).map((k) => [k, 1])),
    versions_seen: {},
  };
}

/** The `newVersions` argument of `put` for a checkpoint made by {@link checkpoint}. */
export function versionsOf(c: TestCheckpoint): Record<string, number | string> {
  return { ...c.channel_versions };
}
