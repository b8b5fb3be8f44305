import type { RoleAnswer } from "@agboss/core";

/** What every question posted to Slack says and where it goes. */
export interface SlackAskOptions {
  /**
   * The conversation to post to, by id (`C0123ABCD`; `G…` or `D…` for a private channel or a direct
   * message). A `#name` is refused: the message could be posted, but not found again by id.
   */
  readonly channel: string;
  /**
   * The question, in Slack mrkdwn (at most 3,000 characters). It is shown to everyone in the
   * conversation: leave the pauseId out, and escape (`&`, `<`, `>`) what comes from the tool's
   * arguments, which may hold anything.
   */
  readonly text: string;
  /** Label → value pairs shown in two columns under the question (at most 10), values in mrkdwn. */
  readonly fields?: Readonly<Record<string, string>>;
  /**
   * A line under the question on how to answer in words, e.g. what the role's reply interpreter
   * understands. Replies in the message's thread are read only when the role has a reply interpreter.
   */
  readonly hint?: string;
}

/** A question an approval role asks: Approve and Reject buttons. */
export interface SlackApprovalOptions extends SlackAskOptions {
  /** Default `Approve`. */
  readonly approveLabel?: string;
  /** Default `Reject`. */
  readonly rejectLabel?: string;
}

/** An answer a question role offers as a button. */
export interface SlackChoice<TRole = unknown> {
  /** The button's label (at most 75 characters). */
  readonly label: string;
  /** The answer it gives: a value of the role's `answer` DTO, checked when the button is clicked. */
  readonly answer: RoleAnswer<TRole>;
}

/**
 * A question a question role asks: people answer in the message's thread (read by the role's reply
 * interpreter), or with one of the `choices` buttons.
 */
export interface SlackQuestionOptions<TRole = unknown> extends SlackAskOptions {
  /** Answers offered as buttons (at most 5); the thread still takes any other. */
  readonly choices?: readonly SlackChoice<TRole>[];
}

/** Where to take a question back from. */
export interface SlackWithdrawOptions {
  /** The conversation the question was posted to: the same id `send` used. */
  readonly channel: string;
  /** What the message says instead of its buttons (mrkdwn). Default: why the pause closed. */
  readonly note?: string;
}

/** Where and how {@link SlackAsker.remind} reminds of a question. */
export interface SlackRemindOptions {
  /** The conversation the question was posted to: the same id `send` used. */
  readonly channel: string;
  /** The reminder's text (mrkdwn). Default: says how long the question has waited, with its number. */
  readonly text?: string;
}
