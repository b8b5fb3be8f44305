export type { AgbossHttpOptions, OpenApiOptions } from "./agboss-http-options.js";
export { createAgbossHttp } from "./create-agboss-http.js";
export type { AnswerOutcome, ExecutionView, PendingPauseView } from "./execution-view.js";
export type { HttpCaller } from "./http-caller.js";
export { HttpError, HttpErrorCode } from "./http-error.js";
export {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  MAX_IDEMPOTENCY_KEY_CHARS,
} from "./idempotency.js";
export { DEFAULT_INBOX_LIMIT, MAX_INBOX_LIMIT } from "./inbox-route.js";
export { openApiDocument } from "./openapi-document.js";
export {
  defaultProblemType,
  PROBLEM_JSON,
  type ProblemDetails,
  problemOf,
  problemResponse,
} from "./problem.js";
export { DEFAULT_MAX_BODY_BYTES, readJsonBody } from "./read-json-body.js";
export type { CancelView } from "./thread-routes.js";
