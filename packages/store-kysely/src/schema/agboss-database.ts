import type { ColumnType } from "kysely";

/** Epoch milliseconds: written as a number, read back as whatever the driver gives for a bigint. */
export type MillisColumn = ColumnType<number | string | bigint, number, number>;
/** A nullable {@link MillisColumn}. */
export type NullableMillisColumn = ColumnType<
  number | string | bigint | null,
  number | null | undefined,
  number | null
>;
/** An integer that may come back from the driver as a string (Postgres bigint). */
export type IntegerColumn = ColumnType<number | string | bigint, number, number>;
/** A binary value: a Buffer from both better-sqlite3 and pg. */
export type BlobColumn = ColumnType<Uint8Array, Uint8Array, Uint8Array>;

/** `agboss_threads`: one row per (tenant, thread). */
export interface ThreadTable {
  tenant_id: string;
  thread_id: string;
  owner_id: string;
  workflow_name: string;
  latest_execution_id: string;
  created_at: MillisColumn;
  updated_at: MillisColumn;
}

/** `agboss_executions`: one row per execution; `record` is JSON text. */
export interface ExecutionTable {
  tenant_id: string;
  execution_id: string;
  root_execution_id: string;
  parent_execution_id: string | null;
  thread_id: string;
  workflow_name: string;
  status: string;
  started_at: MillisColumn;
  updated_at: MillisColumn;
  record: string;
}

/** `agboss_pause_answers`: the write-once audit trail; `answer` is JSON text. */
export interface PauseAnswerTable {
  tenant_id: string;
  idempotency_key: string;
  root_execution_id: string;
  asked_at: MillisColumn;
  answer: string;
}

/** `agboss_leases`: one row per execution tree, kept after release so epochs only grow. */
export interface LeaseTable {
  key: string;
  holder: string;
  epoch: IntegerColumn;
  expires_at: MillisColumn;
}

/** `agboss_pauses`: the operational pause records; `ask`, `step` and `answer` are JSON text. */
export interface PauseTable {
  tenant_id: string;
  pause_id: string;
  idempotency_key: string;
  thread_id: string;
  root_execution_id: string;
  execution_id: string;
  owner_id: string;
  status: string;
  resolution: string | null;
  /** 0 or 1: portable where booleans are not. */
  is_sent: IntegerColumn;
  channel: string;
  answered_by: string;
  agent: string;
  ask: string;
  step: string;
  answer: string | null;
  asked_at: MillisColumn;
  resolved_at: NullableMillisColumn;
  /** JSON: what the channel's send returned to find its question again; null when it gave nothing. */
  channel_ref: string | null;
  /** JSON: what the tool call of a Taken pause returned ({ output } or { error }); null until it returned. */
  tool_result: string | null;
  /** When the sweep acts on a Pending pause next (a reminder, an escalation, an expiry); null when never. */
  next_deadline_at: NullableMillisColumn;
  /** How many reminders were sent before that deadline: with it, what a sweep claims atomically. */
  deadline_reminders: IntegerColumn;
  /** When a pause expires (set once, when created); null when it never does. */
  expires_at: NullableMillisColumn;
}

/** `agboss_checkpoints`: LangGraph checkpoints without their channel values. */
export interface CheckpointTable {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  /** The serde type of `checkpoint`. */
  type: string;
  checkpoint: BlobColumn;
  /** The serde type of `metadata`. */
  metadata_type: string;
  metadata: BlobColumn;
  /** JSON text: for each channel, the id of the checkpoint in this thread and namespace that stored its value. */
  channel_origins: string;
}

/** `agboss_checkpoint_blobs`: a channel value, stored once by the checkpoint that changed it. */
export interface CheckpointBlobTable {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  channel: string;
  type: string;
  value: BlobColumn | null;
}

/** `agboss_checkpoint_writes`: pending writes of a checkpoint's tasks. */
export interface CheckpointWriteTable {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  task_id: string;
  idx: IntegerColumn;
  channel: string;
  type: string;
  value: BlobColumn;
  task_path: string;
}

/** `agboss_budget_ledger`: one model spend counter per (tenant or `*`, budget, window). */
export interface BudgetLedgerTable {
  tenant_id: string;
  budget: string;
  /** Epoch milliseconds; 0 for a budget without a window. */
  window_start: MillisColumn;
  model_calls: IntegerColumn;
  input_tokens: IntegerColumn;
  output_tokens: IntegerColumn;
  /** Set by the first charge; null: kept. */
  expires_at: NullableMillisColumn;
}

/** Every table the AGBoss store keeps, as kysely sees them. */
export interface AgbossDatabase {
  agboss_threads: ThreadTable;
  agboss_executions: ExecutionTable;
  agboss_pause_answers: PauseAnswerTable;
  agboss_leases: LeaseTable;
  agboss_pauses: PauseTable;
  agboss_checkpoints: CheckpointTable;
  agboss_checkpoint_blobs: CheckpointBlobTable;
  agboss_checkpoint_writes: CheckpointWriteTable;
  agboss_budget_ledger: BudgetLedgerTable;
}
