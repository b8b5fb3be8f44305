import type { ExecutionRecord, ExecutionStatus } from "@agboss/core";
import { type HttpCaller, ownerOf } from "./http-caller.js";
import type { HttpContext } from "./http-context.js";
import { HttpError, HttpErrorCode } from "./http-error.js";

/** What `POST /threads/{threadId}/cancel` returns. */
export interface CancelView {
  readonly threadId: string;
  /** The thread's latest execution. */
  readonly executionId: string;
  /** `cancelled`, or how it had ended before. */
  readonly status: ExecutionStatus;
}

function unknownThread(threadId: string): HttpError {
  return new HttpError({
    status: 404,
    code: HttpErrorCode.ThreadUnknown,
    message: `No thread "${threadId}" of yours is known.`,
  });
}

/**
 * `POST /threads/{threadId}/cancel`: the owner cancels the thread; its pending pauses are withdrawn.
 * Another owner's thread, or another tenant's, is 404 as if it did not exist.
 * @internal
 */
export async function cancelRoute(
  context: HttpContext,
  args: { readonly threadId: string; readonly caller: HttpCaller },
): Promise<CancelView> {
  const { app } = context;
  const { threadId, caller } = args;
  const ownerId = ownerOf(caller, "cancel threads");
  const thread = await app.store.threads.findByTenantIdAndThreadId(caller.tenantId, threadId);
  if (thread === undefined || thread.ownerId !== ownerId) throw unknownThread(threadId);
  await app.cancel(threadId, { tenantId: caller.tenantId });
  const record = await app.record(thread.latestExecutionId, { tenantId: caller.tenantId });
  return {
    threadId,
    executionId: thread.latestExecutionId,
    status: record?.status ?? ("cancelled" as ExecutionStatus),
  };
}

/**
 * `GET /executions/{executionId}`: the execution record with its audit trail, for the thread's owner.
 * Another owner's, or another tenant's, is 404 as if it did not exist.
 * @internal
 */
export async function recordRoute(
  context: HttpContext,
  args: { readonly executionId: string; readonly caller: HttpCaller },
): Promise<ExecutionRecord> {
  const { executionId, caller } = args;
  const ownerId = ownerOf(caller, "read execution records");
  const record = await context.app.record(executionId, { tenantId: caller.tenantId });
  if (record === undefined || record.ownerId !== ownerId) {
    throw new HttpError({
      status: 404,
      code: HttpErrorCode.ExecutionUnknown,
      message: `No execution "${executionId}" of yours is known.`,
    });
  }
  return record;
}
