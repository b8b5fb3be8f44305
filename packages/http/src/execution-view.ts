import type {
  ExecutionOutput,
  ExecutionStatus,
  PauseAnswerer,
  PauseKind,
  PauseResolution,
} from "@agboss/core";

/** A waiting pause as the routes show it. A Channel pause has no `pauseId`: only its channel sees it. */
export interface PendingPauseView {
  readonly pauseId?: string;
  readonly answeredBy: PauseAnswerer;
  readonly kind: PauseKind;
  readonly agent: string;
  readonly channel: string;
  /** The question, sensitive fields masked. */
  readonly ask: unknown;
  /** The child execution it waits in; absent in the root. */
  readonly childExecutionId?: string;
  /** The item of a per-item launch it waits in. */
  readonly itemIndex?: number;
}

/** An execution as a start or an answer returns it. */
export interface ExecutionView {
  readonly status: ExecutionStatus;
  readonly threadId: string;
  readonly executionId: string;
  /** The finish's output once completed. */
  readonly output?: unknown;
  /** Every waiting pause; empty unless paused. */
  readonly pending: readonly PendingPauseView[];
}

/** What `POST /pauses/{pauseId}/answer` returns with 200 or 202. */
export type AnswerOutcome =
  | { readonly outcome: "answered"; readonly pauseId: string; readonly execution: ExecutionView }
  | {
      readonly outcome: "recorded";
      readonly pauseId: string;
      readonly threadId: string;
      readonly executionId: string;
      readonly resolvedAt: string;
    }
  | {
      readonly outcome: "already_resolved";
      readonly pauseId: string;
      /** How it closed: `replied`, `decided`, `withdrawn`, `cancelled`. */
      readonly resolution: PauseResolution | string;
      /** Who answered it, when someone did. */
      readonly by?: string;
      /** When it closed (ISO 8601). */
      readonly at?: string;
    };

/** @internal */
export function executionView(result: ExecutionOutput): ExecutionView {
  return {
    status: result.status,
    threadId: result.threadId,
    executionId: result.executionId,
    ...(result.output === undefined ? {} : { output: result.output }),
    pending: result.pending.map((p) => ({
      ...(p.pauseId === undefined ? {} : { pauseId: p.pauseId }),
      answeredBy: p.answeredBy,
      kind: p.kind,
      agent: p.agent,
      channel: p.channel,
      ask: p.ask,
      ...(p.childExecutionId === undefined ? {} : { childExecutionId: p.childExecutionId }),
      ...(p.itemIndex === undefined ? {} : { itemIndex: p.itemIndex }),
    })),
  };
}

/** @internal 202 while paused, else 200. */
export function executionStatusCode(view: ExecutionView): 200 | 202 {
  return view.status === "paused" ? 202 : 200;
}
