export type { InboxAnswerOutcome } from "./answer-route.js";
export { createAgbossInbox } from "./create-agboss-inbox.js";
export { InboxErrorCode } from "./inbox-errors.js";
export type { AgbossInboxOptions, InboxCaller } from "./inbox-options.js";
export {
  INBOX_REQUEST_HEADER,
  type InboxAudit,
  type InboxAuditEntry,
  type InboxClosed,
  type InboxEvents,
  type InboxPause,
  type JsonSchema,
} from "./inbox-types.js";
