import {
  type DtoIssue,
  DtoValidationError,
  ErrorCode,
  ExecutionIdTakenError,
  parseDto,
  ThreadBusyError,
} from "@agboss/core";
import { MAX_THREAD_ID_CHARS, objectBody, throwIssues } from "./body-checks.js";
import { eventStreamResponse, wantsEventStream } from "./event-stream.js";
import { type ExecutionView, executionStatusCode, executionView } from "./execution-view.js";
import { type HttpCaller, ownerOf } from "./http-caller.js";
import type { HttpContext } from "./http-context.js";
import { HttpError } from "./http-error.js";
import {
  idempotencyKeyOf,
  idempotentExecutionId,
  idempotentThreadId,
  type Replay,
  replayOf,
} from "./idempotency.js";
import { readJsonBody } from "./read-json-body.js";

/** @internal What a start answers. */
export type StartReply =
  | {
      readonly status: 200 | 202;
      readonly body: ExecutionView;
      readonly replayed: boolean;
      readonly events?: undefined;
    }
  | {
      /** The run's events as server-sent events, when the request accepts `text/event-stream`. */
      readonly events: Response;
    };

/**
 * `POST /starts/{start}`: `{ input, threadId? }`. 202 with the pending pauses when the execution rests
 * paused, 200 when it ended. With an `Idempotency-Key`, the key's first request starts the execution
 * and every retry gets its state. With `Accept: text/event-stream`, 200 with the run's events as
 * server-sent events, its rest last.
 * @internal
 */
export async function startRoute(
  context: HttpContext,
  args: { readonly request: Request; readonly startName: string; readonly caller: HttpCaller },
): Promise<StartReply> {
  const { request, startName, caller } = args;
  const start = context.starts.get(startName);
  if (start === undefined) {
    throw new HttpError({
      status: 404,
      code: ErrorCode.WorkflowUnknown,
      message: `No workflow start "${startName}" is served here; known: ${[...context.starts.keys()].join(", ") || "none"}.`,
    });
  }
  const ownerId = ownerOf(caller, "start executions");
  const issues: DtoIssue[] = [];
  const key = idempotencyKeyOf(request, issues);
  const body = objectBody(await readJsonBody(request, context.maxBodyBytes), ["input", "threadId"], issues);
  const { threadId } = body;
  if (threadId !== undefined) {
    if (typeof threadId !== "string" || threadId === "" || threadId.length > MAX_THREAD_ID_CHARS)
      issues.push({
        path: "threadId",
        message: `a threadId is a text of 1 to ${MAX_THREAD_ID_CHARS} characters`,
      });
  }
  let input: unknown;
  try {
    input = parseDto(start.input, body.input, `the input of ${start.name}`);
  } catch (error) {
    if (!(error instanceof DtoValidationError)) throw error;
    for (const issue of error.issues)
      issues.push({ path: issue.path === "" ? "input" : `input.${issue.path}`, message: issue.message });
  }
  throwIssues(`the start of ${start.name}`, issues);

  const tenantId = caller.tenantId;
  const thread =
    (threadId as string | undefined) ??
    context.options.threadId?.({ start: start.name, input, caller }) ??
    (key === undefined ? undefined : idempotentThreadId(start.name, ownerId, key));
  const executionId =
    key === undefined || thread === undefined
      ? undefined
      : idempotentExecutionId({ start: start.name, ownerId, key, threadId: thread });
  const replayed = (replay: Replay): StartReply => ({ ...replay, replayed: true });
  if (executionId !== undefined) {
    const replay = await replayOf(context, { tenantId, executionId, start, input });
    if (replay !== undefined) return replayed(replay);
  }
  try {
    const options = {
      ownerId,
      tenant: { tenantId },
      ...(thread === undefined ? {} : { threadId: thread }),
      ...(executionId === undefined ? {} : { executionId }),
    };
    if (wantsEventStream(request)) {
      const run = context.app.stream(start.cls, input as Record<string, unknown>, options);
      const events = await eventStreamResponse(context, run);
      return { events };
    }
    const result = await context.app.execute(start.cls, input as Record<string, unknown>, options);
    const view = executionView(result);
    return { status: executionStatusCode(view), body: view, replayed: false };
  } catch (error) {
    // Another request with the key got there first: report its execution once it is stored. Until
    // then the thread is busy (409): the retry finds it.
    if (
      executionId !== undefined &&
      (error instanceof ThreadBusyError || error instanceof ExecutionIdTakenError)
    ) {
      const replay = await replayOf(context, { tenantId, executionId, start, input });
      if (replay !== undefined) return replayed(replay);
    }
    throw error;
  }
}
