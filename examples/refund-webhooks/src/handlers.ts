import {
  type App,
  DtoValidationError,
  ExecutionStatus,
  NotPausedError,
  PauseAnswererError,
  PauseKind,
  parseDto,
  type ResumeRequest,
  ThreadBusyError,
  ThreadOwnerError,
  UninterpretableReplyError,
  UnknownPauseError,
} from "@agboss/core";
import { RefundDeskWorkflowStart, requestText } from "./desk.js";
import { AnswerWebhookDto, ApprovalWebhookDto, CancelWebhookDto, RefundRequestWebhookDto } from "./dtos.js";
import { Outbox } from "./outbox.js";
import { CardPayments } from "./payments.js";

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
      // `kind` says what the waiting call needs: a decision (approval) or an answer (question).
      const asks = result.pending.some((p) => p.kind === PauseKind.Question);
      return {
        status: 202,
        body: { state: asks ? "awaiting_answer" : "awaiting_approval", threadId: result.threadId },
      };
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

/**
 * Answers one pause with `app.resume` and maps the outcome to HTTP, for both answering webhooks. A
 * decision sent to a question, or an answer sent to an approval, is a DtoValidationError from core
 * whose issue says what to send instead: 400, and the pause keeps waiting.
 */
async function answerPause(
  app: App,
  request: ResumeRequest,
  who: { readonly tenantId: string; readonly answeredBy: string },
): Promise<HttpReply> {
  try {
    const result = await app.resume(request, who);
    app.get(Outbox).settle(request.pauseId, "answered", `answered by ${who.answeredBy}`);
    return {
      status: 200,
      body: { status: result.status, threadId: result.threadId, output: result.output },
    };
  } catch (error) {
    if (error instanceof UninterpretableReplyError) {
      // The pause still waits: ask again, with the interpreter's reason.
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

/** POST /webhooks/approval: a manager pressed a button or wrote a reply. */
export async function handleApproval(app: App, body: unknown): Promise<HttpReply> {
  let request: ResumeRequest;
  let approval: ApprovalWebhookDto;
  try {
    approval = parseDto(ApprovalWebhookDto, body, "the approval");
    request = resumeRequestOf(approval);
  } catch (error) {
    if (error instanceof DtoValidationError) return invalid(error);
    throw error;
  }
  return answerPause(app, request, { tenantId: approval.tenantId, answeredBy: approval.managerId });
}

/** The answer or the reply the answer body carries; exactly one of them. */
function questionRequestOf(body: AnswerWebhookDto): ResumeRequest {
  const hasReply = body.reply !== undefined;
  if (hasReply === (body.answer !== undefined)) {
    throw new DtoValidationError("AnswerWebhookDto", [
      {
        path: hasReply ? "reply" : "answer",
        message: "Send either `answer` (the form) or `reply` (words), not both.",
      },
    ]);
  }
  if (body.reply !== undefined) return { pauseId: body.pauseId, reply: body.reply };
  // The answer is checked against the question role's answer DTO by app.resume, not here.
  return { pauseId: body.pauseId, answer: body.answer ?? {} };
}

/** POST /webhooks/answer: a warehouse lead answered a question, with the form or in words. */
export async function handleAnswer(app: App, body: unknown): Promise<HttpReply> {
  let request: ResumeRequest;
  let answer: AnswerWebhookDto;
  try {
    answer = parseDto(AnswerWebhookDto, body, "the answer");
    request = questionRequestOf(answer);
  } catch (error) {
    if (error instanceof DtoValidationError) return invalid(error);
    throw error;
  }
  return answerPause(app, request, { tenantId: answer.tenantId, answeredBy: answer.staffId });
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

/** GET /refunds: what this instance's card processor was asked to refund (a demo view). */
export function handleRefunds(app: App): HttpReply {
  return { status: 200, body: { refunds: app.get(CardPayments).list() } };
}
