export { createSlackWebhook } from "./create-slack-webhook.js";
export {
  PAUSE_EVENT_TYPE,
  pauseMetadata,
  readPauseMetadata,
  type SlackPauseMetadata,
  SlackQuestionState,
} from "./pause-metadata.js";
export { SlackActionId, SlackBlockId } from "./slack-action-id.js";
export type {
  SlackApprovalOptions,
  SlackAskOptions,
  SlackChoice,
  SlackQuestionOptions,
  SlackRemindOptions,
  SlackWithdrawOptions,
} from "./slack-ask-options.js";
export { SlackAsker } from "./slack-asker.js";
export { SlackChannelError, SlackErrorCode } from "./slack-channel-error.js";
export { SLACK_DEFAULT_API_URL, SlackEnv } from "./slack-env.js";
export { SlackHistoryDirectory, type SlackHistoryDirectoryOptions } from "./slack-history-directory.js";
export type {
  SlackMessageDirectory,
  SlackMessageLookup,
  SlackMessageRef,
  SlackPostedMessage,
} from "./slack-message-directory.js";
export type { SlackQuestionRef } from "./slack-question-ref.js";
export type { SlackRequestHeaders } from "./slack-request-headers.js";
export { type SlackRequestListenerOptions, slackRequestListener } from "./slack-request-listener.js";
export type { SlackSettings } from "./slack-settings.js";
export {
  SLACK_SIGNATURE_TOLERANCE_SECONDS,
  type SlackSignatureCheck,
  type SlackSignatureVerdict,
  signSlackRequest,
  verifySlackSignature,
} from "./slack-signature.js";
export type {
  SlackAnswerSource,
  SlackWebhook,
  SlackWebhookOptions,
  SlackWebhookRequest,
  SlackWebhookResponse,
} from "./slack-webhook-types.js";
