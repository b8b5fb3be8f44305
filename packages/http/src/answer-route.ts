import {
  type AnswerOptions,
  type DtoIssue,
  NotPausedError,
  PauseAnswererError,
  type ResumeCredential,
  type ResumeRequest,
} from "@agboss/core";
import { objectBody, throwIssues } from "./body-checks.js";
import { eventStreamResponse, wantsEventStream } from "./event-stream.js";
import { type AnswerOutcome, executionView } from "./execution-view.js";
import type { HttpCaller } from "./http-caller.js";
import type { HttpContext } from "./http-context.js";
import { readJsonBody } from "./read-json-body.js";

/** @internal What an answer replies. */
export type AnswerReply =
  | {
      readonly status: 200 | 202;
      readonly body: AnswerOutcome;
      /** Set when the answer was only recorded (`Prefer: respond-async`). */
      readonly preferenceApplied?: string;
      readonly events?: undefined;
    }
  | {
      /** The run's events from the answer on as server-sent events (`Accept: text/event-stream`). */
      readonly events: Response;
    };

/** True when the request asks for a reply as soon as the answer is recorded (RFC 7240). */
function prefersAsync(request: Request): boolean {
  const prefer = request.headers.get("prefer");
  return (prefer ?? "").split(",").some((p) => p.trim().toLowerCase() === "respond-async");
}

/** The caller's credentials in the order tried: a caller with both is tried with the other on a wrong-kind refusal. */
function credentialsOf(caller: HttpCaller): ResumeCredential[] {
  const credentials: ResumeCredential[] = [];
  if (caller.answeredBy !== undefined) credentials.push({ answeredBy: caller.answeredBy });
  if (caller.ownerId !== undefined) credentials.push({ ownerId: caller.ownerId });
  return credentials;
}

/**
 * `POST /pauses/{pauseId}/answer`: exactly one of `{ decision }`, `{ answer }` or `{ reply }`. 200 with
 * the execution once it rests again; 200 `already_resolved` (how, by whom, when) for a pause that no
 * longer waits; with `Prefer: respond-async`, 202 as soon as the answer is recorded.
 * @internal
 */
export async function answerRoute(
  context: HttpContext,
  args: { readonly request: Request; readonly pauseId: string; readonly caller: HttpCaller },
): Promise<AnswerReply> {
  const { request, pauseId, caller } = args;
  const issues: DtoIssue[] = [];
  const body = objectBody(
    await readJsonBody(request, context.maxBodyBytes),
    ["decision", "answer", "reply"],
    issues,
  );
  throwIssues("the answer", issues);
  const resumeRequest = { ...body, pauseId } as ResumeRequest;
  const background = prefersAsync(request);
  const credentials = credentialsOf(caller);
  for (let i = 0; ; i++) {
    const options = { tenantId: caller.tenantId, ...credentials[i] } as AnswerOptions;
    try {
      if (background) {
        const receipt = await context.app.answer(resumeRequest, options);
        return {
          status: 202,
          body: { outcome: "recorded", ...receipt },
          preferenceApplied: "respond-async",
        };
      }
      if (wantsEventStream(request)) {
        const events = await eventStreamResponse(context, context.app.streamResume(resumeRequest, options));
        return { events };
      }
      const result = await context.app.resume(resumeRequest, options);
      return { status: 200, body: { outcome: "answered", pauseId, execution: executionView(result) } };
    } catch (error) {
      if (error instanceof NotPausedError) {
        return {
          status: 200,
          body: {
            outcome: "already_resolved",
            pauseId,
            resolution: error.resolution ?? error.status,
            ...(error.responder === undefined ? {} : { by: error.responder }),
            ...(error.resolvedAt === undefined ? {} : { at: error.resolvedAt }),
          },
        };
      }
      // Refused before anything was read or stored: the caller's other identity may be the one it asks for.
      if (error instanceof PauseAnswererError && i + 1 < credentials.length) continue;
      throw error;
    }
  }
}
