import {
  AgbossError,
  DtoValidationError,
  ErrorCode,
  NotPausedError,
  type StreamError,
  UninterpretableReplyError,
} from "@agboss/core";
import { HttpError, HttpErrorCode } from "./http-error.js";

/** The media type of a problem document (RFC 9457). */
export const PROBLEM_JSON = "application/problem+json";

/** An RFC 9457 problem document, with the AGBoss error code beside the standard members. */
export interface ProblemDetails {
  /** Identifies the kind of problem; a page that explains it. */
  readonly type: string;
  /** A short summary of the kind of problem. */
  readonly title: string;
  readonly status: number;
  /** What went wrong this time, and what to do. */
  readonly detail: string;
  /** The AGBoss error code (`pause.unknown`, `thread.busy`, …): branch on it. */
  readonly code: string;
  readonly [extension: string]: unknown;
}

/** @internal How each code is answered. */
const STATUS_OF: Readonly<Record<string, readonly [status: number, title: string]>> = {
  [ErrorCode.DtoInvalid]: [400, "The request is invalid"],
  [ErrorCode.PauseUnknown]: [404, "No such pause"],
  [ErrorCode.NotPaused]: [409, "The pause is not waiting"],
  [ErrorCode.PauseWrongAnswerer]: [403, "Wrong kind of credential for this pause"],
  [ErrorCode.ThreadOwner]: [403, "Not the thread's owner"],
  [ErrorCode.PauseUninterpretableReply]: [422, "The reply could not be read"],
  [ErrorCode.PauseNoReplyInterpreter]: [422, "This pause takes no free-text reply"],
  [ErrorCode.ThreadBusy]: [409, "The thread is busy"],
  [ErrorCode.WorkflowUnknown]: [404, "No such workflow start"],
  [ErrorCode.ExecutionCancelled]: [409, "The execution was cancelled"],
  [ErrorCode.ExecutionFailed]: [409, "The execution failed"],
  [ErrorCode.ExecutionInterrupted]: [409, "The execution was interrupted"],
  [ErrorCode.BudgetExceeded]: [429, "A budget is spent"],
  [ErrorCode.PiiRefused]: [422, "Personal data was refused"],
  [ErrorCode.AppClosed]: [503, "The application is shutting down"],
  [ErrorCode.StoreUnavailable]: [503, "The store is unavailable"],
  [ErrorCode.LeaseLost]: [503, "Another instance took the execution over"],
  [HttpErrorCode.Unauthenticated]: [401, "Authentication required"],
  [HttpErrorCode.Forbidden]: [403, "Forbidden"],
  [HttpErrorCode.RouteUnknown]: [404, "No such route"],
  [HttpErrorCode.MethodNotAllowed]: [405, "Method not allowed"],
  [HttpErrorCode.BodyTooLarge]: [413, "The body is too large"],
  [HttpErrorCode.BodyUnreadable]: [400, "The body cannot be read"],
  [HttpErrorCode.UnsupportedMediaType]: [415, "Send JSON"],
  [HttpErrorCode.ExecutionUnknown]: [404, "No such execution"],
  [HttpErrorCode.ThreadUnknown]: [404, "No such thread"],
  [HttpErrorCode.IdempotencyInProgress]: [409, "A start with this key is still running"],
  [HttpErrorCode.IdempotencyKeyReused]: [422, "The key was used for another request"],
  [HttpErrorCode.CallerInvalid]: [500, "The server's authentication hook failed"],
  [HttpErrorCode.Internal]: [500, "Internal error"],
};

/** The default `type` of a problem: the error codes' page of the documentation. */
export function defaultProblemType(code: string): string {
  return `https://github.com/agboss/agboss/blob/main/docs/errors.md#${code}`;
}

/** The members beside the standard ones that an error carries to its caller. */
function extensionsOf(error: AgbossError): Record<string, unknown> {
  if (error instanceof HttpError) return { ...error.extensions };
  if (error instanceof DtoValidationError) return { dto: error.dto, issues: error.issues };
  if (error instanceof UninterpretableReplyError) return { reason: error.reason };
  if (error instanceof NotPausedError)
    return { resolution: error.resolution ?? error.status, by: error.responder, at: error.resolvedAt };
  return {};
}

/**
 * The problem document for an error: an `AgbossError` keeps its code and message (AGBoss messages say
 * what to do, and carry no secrets); any other error is a 500 `http.internal` whose message stays on
 * the server.
 *
 * @example
 * app.onError((error) => problemResponse(error)); // your own Hono routes, answered the same way
 */
export function problemOf(
  error: unknown,
  options: { problemType?: (code: string) => string } = {},
): ProblemDetails {
  const typeOf = options.problemType ?? defaultProblemType;
  if (!(error instanceof AgbossError)) {
    return {
      type: typeOf(HttpErrorCode.Internal),
      title: "Internal error",
      status: 500,
      detail: "The server failed to handle the request; it was logged.",
      code: HttpErrorCode.Internal,
    };
  }
  const [knownStatus, title] = STATUS_OF[error.code] ?? [500, "The execution failed"];
  const status = error instanceof HttpError ? error.status : knownStatus;
  return {
    ...extensionsOf(error),
    type: typeOf(error.code),
    title,
    status,
    detail: error.message,
    code: error.code,
  };
}

/**
 * The problem document for a failure a follow read from the store (its code and message as the
 * execution record keeps them): the status and title its code has, or a 500; an error without a code
 * keeps its message on the server, as {@link problemOf} does.
 * @internal
 */
export function problemOfStreamError(
  error: StreamError,
  options: { problemType?: (code: string) => string } = {},
): ProblemDetails {
  if (error.code === undefined) return problemOf(undefined, options);
  const typeOf = options.problemType ?? defaultProblemType;
  const [status, title] = STATUS_OF[error.code] ?? [500, "The execution failed"];
  return { type: typeOf(error.code), title, status, detail: error.message, code: error.code };
}

/** A `Response` carrying {@link problemOf}'s document, as `application/problem+json`. */
export function problemResponse(
  error: unknown,
  options: { problemType?: (code: string) => string; headers?: Record<string, string> } = {},
): Response {
  const problem = problemOf(error, options);
  const headers: Record<string, string> = { "content-type": PROBLEM_JSON, ...(options.headers ?? {}) };
  if (problem.status === 503 && headers["retry-after"] === undefined) headers["retry-after"] = "5";
  return new Response(JSON.stringify(problem), { status: problem.status, headers });
}
