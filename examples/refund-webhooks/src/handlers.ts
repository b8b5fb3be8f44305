import {
  type App,
  DtoValidationError,
  ExecutionStatus,
  NotPausedError,
  PauseAnswererError,
  parseDto,
  type ResumeRequest,
  ThreadBusyError,
  ThreadOwnerError,
  UninterpretableReplyError,
  UnknownPauseError,
} from "@agboss/core";
import { RefundDeskWorkflowStart, requestText } from "./desk.js";
import { ApprovalWebhookDto, CancelWebhookDto, RefundRequestWebhookDto } from "./dtos.js";
import { Outbox } from "./outbox.js";

/** What a handler answers; the server writes it as JSON. */
export interface HttpReply {
  readonly status: number;
  readonly body: unknown;
}

/** The thread a request about an order lives on. */
export function threadOf(orderId: string): string {
  return `order:${orderId}`;
}

function invalid(error: DtoValidationError): HttpReply {
  return { status: 400, body: { error: error.code, issues: error.issues } };
}

/** POST /webhooks/refund-request: start the desk on the order's thread. */
export async function handleRefundRequest(app: App, body: unknown): Promise<HttpReply> {
  try {
    const request = parseDto(RefundRequestWebhookDto, body, "the refund request");
    const result = await app.execute(
      RefundDeskWorkflowStart,
      { text: requestText(request) },
      {
        threadId: threadOf(request.orderId),
        ownerId: request.userId,
        tenant: { tenantId: request.tenantId },
      },
    );
    if (result.status === ExecutionStatus.Paused) {
      return { status: 202, body: { state: "awaiting_approval", threadId: result.threadId } };
    }
    return { status: 200, body: { state: result.status, threadId: result.threadId, output: result.output } };
  } catch (error) {
    if (error instanceof DtoValidationError) return invalid(error);
    if (error instanceof ThreadBusyError) {
      return { status: 409, body: { error: error.code, message: "This order already waits for an answer." } };
    }
    throw error;
  }
}

/** The decision or the reply the approval body carries; exactly one of them. */
function resumeRequestOf(body: ApprovalWebhookDto): ResumeRequest {
  const hasReply = body.reply !== undefined;
  const hasDecision = body.approved !== undefined;
  if (hasReply === hasDecision) {
    throw new DtoValidationError("ApprovalWebhookDto", [
      {
        path: hasReply ? "reply" : "approved",
        message: "Send either `approved` (a button) or `reply` (words), not both.",
      },
    ]);
  }
  if (body.reply !== undefined) return { pauseId: body.pauseId, reply: body.reply };
  return {
    pauseId: body.pauseId,
    decision: {
      approved: body.approved === true,
      ...(body.reason === undefined ? {} : { reason: body.reason }),
    },
  };
}

/** POST /webhooks/approval: a manager pressed a button or wrote a reply. */
export async function handleApproval(app: App, body: unknown): Promise<HttpReply> {
  try {
    const approval = parseDto(ApprovalWebhookDto, body, "the approval");
    const result = await app.resume(resumeRequestOf(approval), {
      tenantId: approval.tenantId,
      answeredBy: approval.managerId,
    });
    app.get(Outbox).settle(approval.pauseId, "answered", `answered by ${approval.managerId}`);
    return {
      status: 200,
      body: { status: result.status, threadId: result.threadId, output: result.output },
    };
  } catch (error) {
    if (error instanceof UninterpretableReplyError) {
      // The pause still waits: ask the manager again, with the interpreter's reason.
      return { status: 422, body: { error: error.code, clarify: error.reason } };
    }
    if (error instanceof NotPausedError) {
      // A retried delivery or a second click: say what happened the first time.
      return {
        status: 200,
        body: {
          status: "already_resolved",
          resolution: error.resolution,
          by: error.responder,
          at: error.resolvedAt,
        },
      };
    }
    if (error instanceof UnknownPauseError) return { status: 404, body: { error: error.code } };
    if (error instanceof DtoValidationError) return invalid(error);
    if (error instanceof PauseAnswererError || error instanceof ThreadOwnerError) {
      return { status: 403, body: { error: error.code } };
    }
    throw error;
  }
}

/** POST /webhooks/cancel: the customer withdrew the request; open questions are taken back. */
export async function handleCancel(app: App, body: unknown): Promise<HttpReply> {
  try {
    const request = parseDto(CancelWebhookDto, body, "the cancellation");
    await app.cancel(threadOf(request.orderId), { tenantId: request.tenantId });
    return { status: 200, body: { status: "cancelled", threadId: threadOf(request.orderId) } };
  } catch (error) {
    if (error instanceof DtoValidationError) return invalid(error);
    throw error;
  }
}

/** GET /outbox: what the managers were asked (a demo view: pauseIds are the right to answer). */
export function handleOutbox(app: App): HttpReply {
  return { status: 200, body: { messages: app.get(Outbox).list() } };
}
