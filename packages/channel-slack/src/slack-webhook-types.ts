import type { ResumeCredential } from "@agboss/core";
import type { SlackAsker } from "./slack-asker.js";
import type { SlackRequestHeaders } from "./slack-request-headers.js";

/** A request as the HTTP server received it. */
export interface SlackWebhookRequest {
  /** The body exactly as it arrived (the signature covers these bytes): never a parsed object. */
  readonly body: string | Uint8Array;
  readonly headers: SlackRequestHeaders;
}

/** What to answer Slack. Write it as is: status, headers, body. */
export interface SlackWebhookResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Who answered a question in Slack, and where: what the tenant and the credential are chosen from. */
export interface SlackAnswerSource {
  /** A button click, or a reply in the question's thread. */
  readonly via: "button" | "reply";
  /** The Slack user who clicked or replied, as Slack signed it (`U…`). */
  readonly userId: string;
  /** Their workspace (`T…`), when Slack says. */
  readonly teamId: string | undefined;
  /** Their Enterprise Grid organisation (`E…`), when there is one. */
  readonly enterpriseId: string | undefined;
  /** The conversation of the question. */
  readonly channelId: string;
  /** The tenant the question was asked for, as its message records it. */
  readonly askedFor: string;
}

/** When Slack is answered: before the pause is answered (the default), or after. */
export const SlackAcknowledge = {
  /**
   * Answer Slack at once (200), then answer the pause. Slack wants an answer within 3 seconds, and
   * `app.resume` runs the execution on, model turns included: this is the safe choice.
   */
  BeforeAnswer: "before-answer",
  /** Answer the pause, then Slack: for workflows that are known to go on quickly, or to test. */
  AfterAnswer: "after-answer",
} as const;
export type SlackAcknowledge = (typeof SlackAcknowledge)[keyof typeof SlackAcknowledge];

/** Options of {@link createSlackWebhook}. */
export interface SlackWebhookOptions {
  /** Default: the asker's (`SLACK_SIGNING_SECRET`). */
  readonly signingSecret?: string;
  /**
   * The tenant an answer goes to: one tenant's id, or a function of where the answer came from, e.g.
   * a map from Slack workspace to tenant. Default: the tenant the question was asked for, as its
   * message records it.
   */
  readonly tenant?: string | ((source: SlackAnswerSource) => string | Promise<string>);
  /**
   * The credential `app.resume` gets. Default `{ answeredBy: source.userId }`, for roles answered by
   * the channel (`PauseAnswerer.Channel`); map Slack users to your own ids here, or answer as
   * `{ ownerId }` for roles answered by the thread's owner.
   */
  readonly answerAs?: (source: SlackAnswerSource) => ResumeCredential | Promise<ResumeCredential>;
  /** Default {@link SlackAcknowledge.BeforeAnswer}. */
  readonly acknowledge?: SlackAcknowledge;
  /**
   * Called with the work that goes on after Slack was answered, e.g. a serverless platform's
   * `waitUntil`, so that it is not cut short. A long-running server needs nothing here.
   */
  readonly waitUntil?: (work: Promise<void>) => void;
  /** The asker whose client and settings the webhook uses. Default `app.get(SlackAsker)`. */
  readonly asker?: SlackAsker;
}

/** The Slack webhook of one application: verify, acknowledge, answer. */
export interface SlackWebhook {
  /**
   * Handles one request from Slack (interactivity or the Events API, on one URL or two): checks its
   * signature, answers `url_verification`, and answers button clicks and thread replies to the
   * channel's questions. Never throws for a request's content; resolves what to answer.
   */
  handle(request: SlackWebhookRequest): Promise<SlackWebhookResponse>;
  /** Resolves when the work started after acknowledging (answers, message updates) has finished. */
  idle(): Promise<void>;
}
