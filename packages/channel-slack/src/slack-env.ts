/** The environment variables the Slack channel reads when a setting is not given in code. */
export const SlackEnv = {
  /** The bot token (`xoxb-…`) from the app's OAuth & Permissions page. */
  BotToken: "SLACK_BOT_TOKEN",
  /** The signing secret from the app's Basic Information page; the webhook needs it. */
  SigningSecret: "SLACK_SIGNING_SECRET",
  /** Where the Web API is, for a proxy or a test server; default {@link SLACK_DEFAULT_API_URL}. */
  ApiUrl: "SLACK_API_URL",
} as const;

/** One of the variables in {@link SlackEnv}. */
export type SlackEnv = (typeof SlackEnv)[keyof typeof SlackEnv];

/** Slack's Web API, when {@link SlackEnv.ApiUrl} is not set. */
export const SLACK_DEFAULT_API_URL = "https://slack.com/api/";
