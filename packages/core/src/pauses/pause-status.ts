/** Where a pause is in its life. */
export const PauseStatus = {
  /** Waiting for an answer (`isSent` once its channel's send returned). */
  Pending: "pending",
  /** A resume recorded its decision; the pass that holds the tree takes it. */
  Resolved: "resolved",
  /** Its step took the decision and went on, or its channel decided at once. */
  Taken: "taken",
  /** Withdrawn or cancelled before an answer. */
  Cancelled: "cancelled",
} as const;
export type PauseStatus = (typeof PauseStatus)[keyof typeof PauseStatus];

/** How a pause was resolved. */
export const PauseResolution = {
  /** Its channel answered at once with `ChannelOutcome.decided(…)`; the call never paused. */
  Decided: "decided",
  /** Answered through `app.resume`, by a decision or a reply. */
  Replied: "replied",
  /** Made obsolete: a FailFast sibling failed, or its launch's quorum was decided. */
  Withdrawn: "withdrawn",
  /** `app.cancel`, or its tree ended before an answer. */
  Cancelled: "cancelled",
  /** Nobody answered in time: the question went to the role its deadlines escalate to. */
  Escalated: "escalated",
  /** Nobody answered in time: the role's expiry outcome answered it (a rejection, an approval, an answer, or a failure). */
  Expired: "expired",
} as const;
export type PauseResolution = (typeof PauseResolution)[keyof typeof PauseResolution];

/** The two ways a pause can close without an answer. */
export type PauseCancellation = typeof PauseResolution.Withdrawn | typeof PauseResolution.Cancelled;

/**
 * Why a channel is told to take a question back: withdrawn or cancelled (no answer is needed any more),
 * escalated (another role is asked instead), or expired (its deadline answered it).
 */
export type PauseWithdrawalResolution =
  | PauseCancellation
  | typeof PauseResolution.Escalated
  | typeof PauseResolution.Expired;

/** Who may answer a pause. Required on every channel role: there is no default. */
export const PauseAnswerer = {
  /** The thread's owner answers with `ownerId`; the pauseId is listed in `result.pending`. */
  ThreadOwner: "thread-owner",
  /** Someone the channel authenticated answers with `answeredBy`; only the channel sees the pauseId. */
  Channel: "channel",
} as const;
export type PauseAnswerer = (typeof PauseAnswerer)[keyof typeof PauseAnswerer];

/** What a pause asks for, so a webhook knows what to send to `app.resume`. */
export const PauseKind = {
  /** An approval role or a concrete channel: answer with `{ decision }` (or a reply). */
  Approval: "approval",
  /** A question role: answer with `{ answer }`, a value of the role's `answer` DTO (or a reply). */
  Question: "question",
} as const;
export type PauseKind = (typeof PauseKind)[keyof typeof PauseKind];
