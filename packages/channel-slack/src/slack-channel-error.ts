import { AgbossError } from "@agboss/core";

/** The stable codes of the errors `@agboss/channel-slack` throws. */
export const SlackErrorCode = {
  /** A setting is missing: neither given in code nor in its environment variable. */
  MissingSetting: "slack.missing-setting",
  /** A setting cannot work, e.g. an API URL that is no URL or a channel given by name. */
  BadSetting: "slack.bad-setting",
  /** The channel's question could not be posted or updated in Slack. */
  PostFailed: "slack.post-failed",
} as const;

/** One of the codes in {@link SlackErrorCode}. */
export type SlackErrorCode = (typeof SlackErrorCode)[keyof typeof SlackErrorCode];

/**
 * A failure of the Slack channel: a configuration that cannot work (thrown when the application
 * starts or the webhook is created, naming what to set), or a question Slack refused to post.
 */
export class SlackChannelError extends AgbossError {
  static override readonly kind: string = "SlackChannelError";

  constructor(code: SlackErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
  }
}
