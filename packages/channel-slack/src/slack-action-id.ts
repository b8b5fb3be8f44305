/** The `action_id`s of the buttons the channel posts; the webhook acts on these and ignores the rest. */
export const SlackActionId = {
  /** An approval's Approve button: `{ approved: true }`. */
  Approve: "agboss_approve",
  /** An approval's Reject button: `{ approved: false }`. */
  Reject: "agboss_reject",
  /** The prefix of a question's answer buttons (`agboss_answer_0`, …): the answer the button carries. */
  AnswerPrefix: "agboss_answer_",
} as const;

/** The `block_id`s of the blocks the channel posts. */
export const SlackBlockId = {
  /** The question: kept when the message is closed. */
  Question: "agboss_question",
  /** The buttons: removed when the message is closed. */
  Actions: "agboss_actions",
  /** How to answer in words: removed when the message is closed. */
  Hint: "agboss_hint",
  /** What became of the question, added when the message is closed. */
  Status: "agboss_status",
} as const;
