import type { SlackPauseMetadata } from "./pause-metadata.js";

/** Where a message is: its conversation and its timestamp (Slack's message id). */
export interface SlackMessageRef {
  /** The conversation's id (`C…`, `G…`, `D…`). */
  readonly channel: string;
  readonly ts: string;
}

/** A question message as found again; what is left out is read from Slack when needed. */
export interface SlackPostedMessage extends SlackMessageRef {
  /** The notification text it was posted with. */
  readonly text?: string | undefined;
  /** Its Block Kit blocks. */
  readonly blocks?: readonly unknown[] | undefined;
  /** What its metadata says. */
  readonly metadata?: SlackPauseMetadata | undefined;
}

/** What a directory is asked. */
export interface SlackMessageLookup {
  readonly pauseId: string;
  /** The conversation the question was posted to. */
  readonly channel: string;
  /**
   * True for the check a `send` makes before posting: a send retried after a crash posted moments
   * ago, so a directory that reads history may look at the latest messages only. False (or absent)
   * for a withdrawal whose pause has no ref.
   */
  readonly recent?: boolean;
}

/**
 * Finds a pause's message again by its pauseId: before a post, so that a retried `send` does not
 * post twice, and on `withdraw` when the pause has no ref of this channel (a question asked by an
 * earlier version, or by a `send` that returned an outcome of its own). A withdrawal whose pause
 * kept the ref the ask methods return goes straight to its message and does not ask the directory.
 *
 * The default, {@link SlackHistoryDirectory}, asks Slack itself and keeps nothing; implement this to
 * keep the mapping in your own database instead (no history reads, no limit on how far back).
 */
export interface SlackMessageDirectory {
  /** Where the question of `lookup.pauseId` was posted in `lookup.channel`, or undefined. */
  find(lookup: SlackMessageLookup): Promise<SlackPostedMessage | undefined>;
  /** Notes where a question was posted, right after the post. Optional: a directory that reads Slack needs nothing. */
  remember?(pauseId: string, message: SlackMessageRef): Promise<void>;
}
