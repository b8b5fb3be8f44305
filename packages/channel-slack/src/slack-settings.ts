import type { WebClient, WebClientOptions } from "@slack/web-api";
import type { SlackMessageDirectory } from "./slack-message-directory.js";

/**
 * How the Slack channel connects. What is not given here is read from the environment when the
 * application starts ({@link SlackEnv}); never write a real token or secret in code.
 */
export interface SlackSettings {
  /** The bot token (`xoxb-…`). Default: `SLACK_BOT_TOKEN`. */
  readonly botToken?: string;
  /** The signing secret the webhook checks requests with. Default: `SLACK_SIGNING_SECRET`. */
  readonly signingSecret?: string;
  /** The Web API's base URL. Default: `SLACK_API_URL`, else `https://slack.com/api/`. */
  readonly apiUrl?: string;
  /** The variables to read. Default `process.env`, read at startup. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * More options for the `WebClient` the channel makes, e.g. `{ timeout: 5_000 }`. By default it
   * gives up after 10 s and retries twice within a few seconds, not the client's own thirty minutes,
   * because `send` runs inside the execution's pass.
   */
  readonly clientOptions?: WebClientOptions;
  /** A `WebClient` you made yourself; `botToken`, `apiUrl` and `clientOptions` are then not used. */
  readonly client?: WebClient;
  /**
   * Where a pause's message is found again by its pauseId: to avoid a second post, and to withdraw a
   * question whose pause kept no ref. Default: a {@link SlackHistoryDirectory}, which reads the
   * conversation's recent history.
   */
  readonly directory?: (client: WebClient) => SlackMessageDirectory;
}
