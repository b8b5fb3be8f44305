import type { ExecutionFrame } from "../container/execution-context.js";
import type { ModelUsage } from "../models/chat-model.js";
import type { RuntimeServices } from "./runtime-services.js";

/** Fields every event of a streamed run carries. */
export interface StreamEventBase {
  /** The execution the event happened in: the root's, or a child workflow's. */
  readonly executionId: string;
  readonly rootExecutionId: string;
  readonly threadId: string;
  /** ISO 8601 on the application's Clock. */
  readonly at: string;
}

/** A tool call as the stream names it: no arguments, which may hold sensitive values. */
export interface StreamToolCall {
  readonly id: string;
  readonly name: string;
}

/** An error as the stream shows it. */
export interface StreamError {
  readonly name: string;
  /** The `AgbossError` code, when it has one. */
  readonly code?: string | undefined;
  readonly message: string;
}

/** What a step of a streamed run did, as it happened. */
export type ProgressEvent = StreamEventBase &
  (
    | {
        /** A piece of a model's answer as it arrives (only from models that stream their text). */
        readonly type: "model.text";
        readonly caller: string;
        readonly model: string;
        readonly text: string;
      }
    | {
        /** A model turn ended: its text, the tools it called (by name), what it used. */
        readonly type: "model.turn";
        readonly caller: string;
        readonly model: string;
        readonly text: string;
        readonly toolCalls: readonly StreamToolCall[];
        readonly usage: ModelUsage | undefined;
      }
    | {
        /** A model call was charged to the budgets of its tree. */
        readonly type: "budget.spent";
        readonly caller: string;
        readonly model: string;
        readonly usage: ModelUsage | undefined;
        /** The budgets charged, by level (`application`, `workflow`, `execution`) and name. */
        readonly budgets: readonly { readonly level: string; readonly name: string }[];
      }
    | {
        /** A tool started; `arguments` are masked by its input DTO. */
        readonly type: "tool.started";
        readonly tool: string;
        readonly callId: string | undefined;
        readonly agent: string | undefined;
        readonly arguments: unknown;
      }
    | {
        /** A tool returned; `output` is masked by its output DTO. */
        readonly type: "tool.returned";
        readonly tool: string;
        readonly callId: string | undefined;
        readonly agent: string | undefined;
        readonly output: unknown;
      }
    | {
        /** A tool threw or timed out (the model reads the error as the call's result). */
        readonly type: "tool.failed";
        readonly tool: string;
        readonly callId: string | undefined;
        readonly agent: string | undefined;
        readonly error: StreamError;
      }
    | {
        /** A pause was asked: its channel was sent the call. */
        readonly type: "pause.asked";
        /** Undefined for a pause a channel answers (its id is the channel's secret). */
        readonly pauseId: string | undefined;
        readonly tool: string;
        readonly callId: string;
        readonly agent: string;
        /** The channel role asked. */
        readonly role: string;
      }
    | {
        /** The step took its pause's answer. */
        readonly type: "pause.answered";
        readonly pauseId: string | undefined;
        readonly tool: string;
        readonly callId: string;
        readonly agent: string;
        readonly outcome: "approved" | "answered" | "rejected";
      }
    | {
        /** The step found its pause withdrawn (a decided launch, a quorum, a cancel). */
        readonly type: "pause.withdrawn";
        readonly pauseId: string | undefined;
        readonly tool: string;
        readonly callId: string;
        readonly agent: string;
      }
  );

/** A progress event without the fields {@link tellProgress} fills in. */
export type ProgressEventBody = ProgressEvent extends infer E
  ? E extends ProgressEvent
    ? Omit<E, keyof StreamEventBase>
    : never
  : never;

/**
 * Tells the listener of the run `frame` belongs to (`app.stream`) and the followers of its tree in this
 * process (`app.follow`) what just happened. Costs two checks when nobody listens: `body` is a function,
 * built only for a listener. `pauseKey` is the id of the pause a pause's event is about.
 * @internal
 */
export function tellProgress(
  services: RuntimeServices,
  frame: ExecutionFrame | undefined,
  body: () => ProgressEventBody,
  pauseKey?: string,
): void {
  if (frame === undefined) return;
  const followers = services.followers;
  const followed = followers?.watching(frame.tenant.tenantId, frame.rootExecutionId) === true;
  if (frame.progress === undefined && !followed) return;
  const event = {
    executionId: frame.executionId,
    rootExecutionId: frame.rootExecutionId,
    threadId: frame.threadId,
    at: new Date(services.clock.now()).toISOString(),
    ...body(),
  } as ProgressEvent;
  frame.progress?.(event);
  if (followed) followers?.publish(frame.tenant.tenantId, frame.rootExecutionId, event, pauseKey);
}

/** An error as the stream shows it. @internal */
export function streamErrorOf(error: unknown): StreamError {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { name: error.name, code: typeof code === "string" ? code : undefined, message: error.message };
  }
  return { name: "Error", message: String(error) };
}
