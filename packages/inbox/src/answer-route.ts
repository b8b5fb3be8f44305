import {
  type AnswerOptions,
  type DtoIssue,
  DtoValidationError,
  NotPausedError,
  PauseAnswerer,
  type ResumeRequest,
} from "@agboss/core";
import { readJsonBody } from "@agboss/http";
import type { CheckedCaller } from "./inbox-caller.js";
import type { InboxContext } from "./inbox-context.js";
import { InboxErrorCode, inboxError } from "./inbox-errors.js";
import { isVisibleTo } from "./pending-pauses.js";

const FORMS = ["decision", "answer", "reply"] as const;

/** What an answer from the page returns. */
export type InboxAnswerOutcome =
  | {
      readonly outcome: "recorded";
      readonly pauseId: string;
      /** The execution the pause waited in: the root's, or a child workflow's. */
      readonly executionId: string;
      /** The tree's root execution: the id of its audit trail (`GET /api/executions/{id}`). */
      readonly rootExecutionId: string;
      readonly resolvedAt: string;
    }
  | {
      readonly outcome: "already_resolved";
      readonly pauseId: string;
      readonly resolution: string;
      readonly by?: string;
      readonly at?: string;
    };

function unknownPause(pauseId: string): Error {
  return inboxError(404, InboxErrorCode.PauseUnknown, `No pause "${pauseId}" is in your inbox.`);
}

/** The body's one form of answer; every problem at once. */
function requestOf(body: unknown, pauseId: string): ResumeRequest {
  const issues: DtoIssue[] = [];
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    issues.push({ path: "", message: "send a JSON object with one of decision, answer, reply" });
  } else {
    const keys = Object.keys(body);
    for (const key of keys) {
      if (!(FORMS as readonly string[]).includes(key))
        issues.push({ path: key, message: `unknown field; send one of ${FORMS.join(", ")}` });
    }
    const given = FORMS.filter((f) => f in body);
    if (given.length !== 1)
      issues.push({ path: "", message: `send exactly one of ${FORMS.join(", ")}, not ${given.length}` });
  }
  if (issues.length > 0) throw new DtoValidationError("the answer", issues);
  return { ...(body as object), pauseId } as ResumeRequest;
}

/**
 * A sensitive argument the page showed masked and the person left alone keeps its value: an override
 * without it gets the original back, since nobody at the page could have retyped it.
 */
function withSensitiveKept(
  context: InboxContext,
  pause: Parameters<typeof isVisibleTo>[0],
  request: ResumeRequest,
): ResumeRequest {
  if (!("decision" in request) || typeof request.decision !== "object" || request.decision === null)
    return request;
  const override = (request.decision as { overrideArguments?: unknown }).overrideArguments;
  if (typeof override !== "object" || override === null || Array.isArray(override)) return request;
  const kept: Record<string, unknown> = {};
  const original = pause.ask.arguments as Record<string, unknown>;
  for (const field of context.views.sensitiveOf(pause)) {
    if (!(field in override) && field in original) kept[field] = original[field];
  }
  if (Object.keys(kept).length === 0) return request;
  return { ...request, decision: { ...request.decision, overrideArguments: { ...override, ...kept } } };
}

/**
 * `POST /api/pauses/{pauseId}/answer` from the page: `{ decision }`, `{ answer }` or `{ reply }`, recorded
 * with the credential the pause asks for (its thread's owner, or the role's `answeredBy`). Returns once
 * the answer is durable; the execution moves on in the background.
 * @internal
 */
export async function answerRoute(
  context: InboxContext,
  args: { readonly request: Request; readonly pauseId: string; readonly caller: CheckedCaller },
): Promise<InboxAnswerOutcome> {
  const { request, pauseId, caller } = args;
  const pause = await context.app.store.pauses.findByTenantIdAndPauseId(caller.tenantId, pauseId);
  if (pause === undefined || !isVisibleTo(pause, caller)) {
    await request.body?.cancel().catch(() => undefined);
    throw unknownPause(pauseId);
  }
  const resumeRequest = withSensitiveKept(
    context,
    pause,
    requestOf(await readJsonBody(request, context.maxBodyBytes), pauseId),
  );
  const credential =
    pause.answeredBy === PauseAnswerer.ThreadOwner
      ? { ownerId: caller.ownerId as string }
      : { answeredBy: caller.answeredBy as string };
  try {
    const receipt = await context.app.answer(resumeRequest, {
      tenantId: caller.tenantId,
      ...credential,
    } as AnswerOptions);
    return {
      outcome: "recorded",
      pauseId,
      executionId: receipt.executionId,
      rootExecutionId: pause.rootExecutionId,
      resolvedAt: receipt.resolvedAt,
    };
  } catch (error) {
    if (!(error instanceof NotPausedError)) throw error;
    return {
      outcome: "already_resolved",
      pauseId,
      resolution: error.resolution ?? error.status,
      ...(error.responder === undefined ? {} : { by: error.responder }),
      ...(error.resolvedAt === undefined ? {} : { at: error.resolvedAt }),
    };
  }
}
