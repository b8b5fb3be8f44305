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
   * The credential `app.answer` gets. Default `{ answeredBy: source.userId }`, for roles answered by
   * the channel (`PauseAnswerer.Channel`); map Slack users to your own ids here, or answer as
   * `{ ownerId }` for roles answered by the thread's owner. Like `tenant`, it runs before Slack is
   * answered: keep it quick.
   */
  readonly answerAs?: (source: SlackAnswerSource) => ResumeCredential | Promise<ResumeCredential>;
  /**
   * How long a thread reply may take to be read and recorded before the Events API delivery is
   * acknowledged anyway, in milliseconds; the reply is then recorded after the 200. Default 2000, within
   * Slack's 3 seconds (a reply interpreter that is a model can take longer). `0` acknowledges every
   * reply at once. Clicks do not wait on it: they are always recorded before Slack is answered.
   */
  readonly replyWaitMs?: number;
  /**
   * Called, once per click or thread reply, with everything that goes on after Slack was answered: the update of the
   * message or the note to the person, and the execution's move in the app (it ends with `app.idle()`).
   * For a serverless platform's `waitUntil`, so that the work is not cut short when the response is
   * sent. A long-running server needs nothing here.
   */
  readonly waitUntil?: (work: Promise<void>) => void;
  /** The asker whose client and settings the webhook uses. Default `app.get(SlackAsker)`. */
  readonly asker?: SlackAsker;
}

/** The Slack webhook of one application: verify, record the answer, acknowledge, report in Slack. */
export interface SlackWebhook {
  /**
   * Handles one request from Slack (interactivity or the Events API, on one URL or two): checks its
   * signature, answers `url_verification`, and records button clicks and thread replies to the
   * channel's questions with `app.answer`. Resolves what to answer Slack once a click's answer is
   * recorded (a thread reply's too, unless it takes longer than `replyWaitMs`). Never throws for a
   * request's content.
   */
  handle(request: SlackWebhookRequest): Promise<SlackWebhookResponse>;
  /**
   * Resolves when the work that goes on after Slack was answered has finished: message updates and
   * notes, replies still being read, and the executions the app moves on in the background
   * (`app.idle()`). Await it before `app.close()` on shutdown, and in tests.
   */
  idle(): Promise<void>;
}
