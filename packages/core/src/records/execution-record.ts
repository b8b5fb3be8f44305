import type { BudgetLimits } from "../budgets/budget.js";
import type { Tenant } from "../container/execution-context.js";
import type { ModelUsage } from "../models/chat-model.js";
import type { ExecutionStatus } from "./execution-status.js";
import type { PauseEntry } from "./pause-entry.js";
import type { StepRecord } from "./step.js";

/** One thing an execution did: a model turn or a tool call. */
export type ExecutionStep =
  | {
      readonly type: "model";
      readonly step: StepRecord;
      readonly model: string;
      readonly usage: ModelUsage | undefined;
      /** Tool names the model called in this turn; empty for an answer. */
      readonly calledTools: readonly string[];
      readonly at: string;
      /** Who called the model: `agent:<name>`, or `reply-interpreter:<name>` for a reply read for this step. */
      readonly caller?: string | undefined;
    }
  | {
      readonly type: "tool";
      readonly step: StepRecord;
      readonly tool: string;
      /** The arguments, sensitive fields masked. */
      readonly arguments: unknown;
      /** The output, sensitive fields masked; undefined when the call failed. */
      readonly output: unknown;
      /** What the model read when the call failed. */
      readonly error: string | undefined;
      /** A question role's answer the tool ran with, sensitive fields masked; absent for other tools. */
      readonly answer?: unknown;
      readonly at: string;
    };

/** A child execution (a workflow run as a step), as its parent's record lists it. */
export interface ChildExecutionRecord {
  readonly executionId: string;
  readonly parentExecutionId: string;
  readonly workflow: { readonly name: string; readonly version: string };
  readonly start: string;
  /** Completed, or Paused while one of its pauses waits. */
  readonly status: ExecutionStatus;
  /** The item of a per-item launch it ran for. */
  readonly itemIndex: number | undefined;
  /** Its output, sensitive fields masked; undefined until it completed. */
  readonly output: unknown;
  readonly steps: readonly ExecutionStep[];
  /** The pauses its own steps asked (a grandchild's are in that child's record). */
  readonly pauses: readonly PauseEntry[];
  readonly children: readonly ChildExecutionRecord[];
}

/** An execution's history: what ran, with what, and how it ended. */
export interface ExecutionRecord {
  readonly tenantId: string;
  /** The tenant as `execute` was given it. */
  readonly tenant: Tenant;
  readonly executionId: string;
  readonly rootExecutionId: string;
  readonly threadId: string;
  readonly ownerId: string;
  readonly workflow: { readonly name: string; readonly version: string };
  readonly start: string;
  readonly status: ExecutionStatus;
  /** ISO 8601 on the application's Clock. */
  readonly startedAt: string;
  readonly finishedAt: string | undefined;
  /** The start's input, sensitive fields masked. */
  readonly input: unknown;
  /** The finish's output, sensitive fields masked. */
  readonly output: unknown;
  readonly error:
    | { readonly code: string | undefined; readonly name: string; readonly message: string }
    | undefined;
  readonly steps: readonly ExecutionStep[];
  /** Sums over every model call of the execution. */
  readonly usage: {
    readonly modelCalls: number;
    readonly inputTokens: number;
    readonly outputTokens: number;
  };
  /** The limits `app.execute(…, { budget })` gave the execution tree; undefined when it gave none. */
  readonly budget?: BudgetLimits | undefined;
  /** The audit trail: every resolved pause of the tree, in the order asked. */
  readonly pauses: readonly PauseEntry[];
  /** Its child executions, each with its own pauses. */
  readonly children?: readonly ChildExecutionRecord[];
}
