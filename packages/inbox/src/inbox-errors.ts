import { HttpError } from "@agboss/http";

/** The stable codes of the errors `@agboss/inbox` answers with, beside core's and `@agboss/http`'s. */
export const InboxErrorCode = {
  /** `authenticate` returned a caller the inbox cannot serve (an unknown role, roles without `answeredBy`): 500. */
  CallerInvalid: "inbox.caller-invalid",
  /** This pause is not in the caller's inbox (another tenant's, another owner's, a role they do not answer): 404. */
  PauseUnknown: "inbox.pause-unknown",
  /** No execution with this id is visible to the caller: 404. */
  ExecutionUnknown: "inbox.execution-unknown",
  /** The answer did not come from the inbox's page (its header is missing): 403. */
  NotFromPage: "inbox.not-from-page",
  /** The page's built files are missing: the package was not built. 500. */
  AssetsMissing: "inbox.assets-missing",
  /** `createAgbossInbox` was given options that cannot work; thrown when it is called. */
  BadOption: "inbox.bad-option",
} as const;

/** One of the codes in {@link InboxErrorCode}. */
export type InboxErrorCode = (typeof InboxErrorCode)[keyof typeof InboxErrorCode];

/** @internal */
export function inboxError(
  status: number,
  code: InboxErrorCode,
  message: string,
  cause?: unknown,
): HttpError {
  return new HttpError({ status, code, message, cause });
}
