import { createHash } from "node:crypto";
import {
  type DtoIssue,
  ErrorCode,
  ExecutionStatus,
  maskWith,
  PauseAnswerer,
  PauseStatus,
} from "@agboss/core";
import type { ExecutionView, PendingPauseView } from "./execution-view.js";
import type { HttpContext, ServedStart } from "./http-context.js";
import { HttpError, HttpErrorCode } from "./http-error.js";

/** The header a start's retries repeat. */
export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";
/** Set on a start's response that replays what the key's first request started. */
export const IDEMPOTENT_REPLAYED_HEADER = "idempotent-replayed";
/** The longest key, in characters. */
export const MAX_IDEMPOTENCY_KEY_CHARS = 255;

/** @internal The request's key, or undefined; a malformed one adds an issue. */
export function idempotencyKeyOf(request: Request, issues: DtoIssue[]): string | undefined {
  const key = request.headers.get(IDEMPOTENCY_KEY_HEADER);
  if (key === null) return undefined;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_CHARS || !/^[\x21-\x7e]+$/.test(key)) {
    issues.push({
      path: "Idempotency-Key",
      message: `the key must be 1 to ${MAX_IDEMPOTENCY_KEY_CHARS} visible ASCII characters, e.g. a UUID`,
    });
    return undefined;
  }
  return key;
}

/**
 * @internal The thread a keyed start runs on when neither its body nor the `threadId` option names one:
 * one per (start, owner, key).
 */
export function idempotentThreadId(start: string, ownerId: string, key: string): string {
  return `idempotency:${digest([start, ownerId, key])}`;
}

/**
 * @internal The execution id of a keyed start: one per (start, owner, key, thread). Core refuses a
 * second start with it under the thread's lease, so the key's first request starts the only execution,
 * and every retry finds it by this id, from any instance.
 */
export function idempotentExecutionId(args: {
  readonly start: string;
  readonly ownerId: string;
  readonly key: string;
  readonly threadId: string;
}): string {
  return `idempotency:${digest([args.start, args.ownerId, args.key, args.threadId])}`;
}

function digest(parts: readonly string[]): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("base64url");
}

/** @internal What a replay answers: a response's status and body, or a problem to throw. */
export interface Replay {
  readonly status: 200 | 202;
  readonly body: ExecutionView;
}

/** The answer to a keyed start whose first request is still running. */
function inProgress(): HttpError {
  return new HttpError({
    status: 409,
    code: HttpErrorCode.IdempotencyInProgress,
    message:
      "The start with this Idempotency-Key is still running; retry the same request in a moment to get its result.",
    extensions: { retryAfterSeconds: 1 },
  });
}

/**
 * @internal What the key's first request started, as its response, when it started anything: the
 * execution's state now, read from the store by its id. A different input under the same key is a 422; an
 * execution still running a 409 to retry.
 */
export async function replayOf(
  context: HttpContext,
  args: {
    readonly tenantId: string;
    readonly executionId: string;
    readonly start: ServedStart;
    readonly input: unknown;
  },
): Promise<Replay | undefined> {
  const { app } = context;
  const record = await app.record(args.executionId, { tenantId: args.tenantId });
  if (record === undefined) return undefined;
  const masked = maskWith(args.start.input.schema, args.input);
  if (JSON.stringify(masked) !== JSON.stringify(record.input)) {
    throw new HttpError({
      status: 422,
      code: HttpErrorCode.IdempotencyKeyReused,
      message:
        "This Idempotency-Key already started an execution with another input; use a new key for a new request.",
    });
  }
  const base = { threadId: record.threadId, executionId: record.executionId };
  switch (record.status) {
    case ExecutionStatus.Running:
      throw inProgress();
    case ExecutionStatus.Paused: {
      const pauses = await app.pauses.list({
        tenantId: args.tenantId,
        threadId: record.threadId,
        status: PauseStatus.Pending,
      });
      const pending = pauses.map(
        (p): PendingPauseView => ({
          ...(p.answeredBy === PauseAnswerer.ThreadOwner && p.pauseId !== undefined
            ? { pauseId: p.pauseId }
            : {}),
          answeredBy: p.answeredBy,
          kind: p.kind,
          agent: p.agent,
          channel: p.channel,
          ask: p.ask,
          ...(p.executionId === record.executionId ? {} : { childExecutionId: p.executionId }),
        }),
      );
      return { status: 202, body: { status: ExecutionStatus.Paused, ...base, pending } };
    }
    case ExecutionStatus.Failed:
      throw new HttpError({
        status: 500,
        code: record.error?.code ?? ErrorCode.ExecutionFailed,
        message: `The execution this Idempotency-Key started failed: ${record.error?.message ?? "no reason was recorded"}`,
        extensions: base,
      });
    default:
      return {
        status: 200,
        body: {
          status: record.status,
          ...base,
          ...(record.output === undefined ? {} : { output: record.output }),
          pending: [],
        },
      };
  }
}
