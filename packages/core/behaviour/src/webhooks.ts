import {
  type App,
  DtoValidationError,
  ExecutionStatus,
  NotPausedError,
  PauseAnswererError,
  ThreadOwnerError,
  UninterpretableReplyError,
  UnknownPauseError,
} from "@agboss/core";
import { OfficeWorkflowStart } from "./fixtures/approval-app.js";

/** What an HTTP handler answers. */
export interface WebhookAnswer {
  readonly httpStatus: number;
  readonly body: Record<string, unknown>;
}

/** POST /webhooks/request: starts the office workflow on a thread derived from the request id. */
export async function handleRequest(
  app: Pick<App, "execute">,
  body: { requestId: string; text: string; tenantId: string; userId: string },
): Promise<WebhookAnswer> {
  const result = await app.execute(
    OfficeWorkflowStart,
    { text: body.text },
    { threadId: `request:${body.requestId}`, ownerId: body.userId, tenant: { tenantId: body.tenantId } },
  );
  if (result.status === ExecutionStatus.Paused)
    return { httpStatus: 202, body: { state: "awaiting_approval", threadId: result.threadId } };
  return { httpStatus: 200, body: { state: "completed", output: result.output } };
}

/** POST /webhooks/approval: a manager pressed a button (decision) or wrote a reply. */
export async function handleApproval(
  app: Pick<App, "resume">,
  body: { pauseId: string; tenantId: string; managerId: string; approved?: boolean; reply?: string },
): Promise<WebhookAnswer> {
  try {
    const request =
      body.reply === undefined
        ? { pauseId: body.pauseId, decision: { approved: body.approved === true } }
        : { pauseId: body.pauseId, reply: body.reply };
    const result = await app.resume(request, { tenantId: body.tenantId, answeredBy: body.managerId });
    return { httpStatus: 200, body: { status: result.status } };
  } catch (error) {
    if (error instanceof UninterpretableReplyError)
      return { httpStatus: 422, body: { clarify: error.reason } };
    if (error instanceof NotPausedError) {
      return {
        httpStatus: 200,
        body: {
          status: "already_resolved",
          resolution: error.resolution,
          by: error.responder,
          at: error.resolvedAt,
        },
      };
    }
    if (error instanceof UnknownPauseError)
      return { httpStatus: 404, body: { status: "unknown_or_expired_pause" } };
    if (error instanceof DtoValidationError) return { httpStatus: 400, body: { issues: error.issues } };
    if (error instanceof PauseAnswererError || error instanceof ThreadOwnerError)
      return { httpStatus: 403, body: { error: error.code } };
    throw error;
  }
}
