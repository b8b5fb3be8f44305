import type { KnownBlock, SectionBlock } from "@slack/types";
import { SlackBlockId } from "./slack-action-id.js";
import type { SlackMessageRef, SlackPostedMessage } from "./slack-message-directory.js";

/** The version of {@link SlackQuestionRef} this package writes and reads. */
const REF_VERSION = 1;

/**
 * The most JSON a ref takes with its question kept in it. A larger question is left out of the ref:
 * its withdrawal then reads the message back once (one `conversations.history` call, no search).
 */
export const MAX_QUESTION_REF_BYTES = 2048;

const CONVERSATION_ID = /^[A-Z0-9][A-Z0-9_-]{0,63}$/i;
const MESSAGE_TS = /^\d{1,20}\.\d{1,10}$/;
const MAX_FIELDS = 10;

/**
 * What `SlackAsker` keeps with a pause (`ChannelOutcome.awaitReply({ ref })`) and reads back as
 * `withdrawal.ref`: where the question's message is, and, when it is small, the question as posted,
 * so that `withdraw` edits the message with one `chat.update` and reads nothing from Slack.
 */
export type SlackQuestionRef = {
  /** The ref's version: 1. A ref of another version is not read, and the directory is asked instead. */
  readonly v: 1;
  /** The conversation's id, as Slack returned it for the post. */
  readonly channel: string;
  /** The message's timestamp (Slack's message id). */
  readonly ts: string;
  /**
   * The question's text and its fields' mrkdwn, exactly as posted; left out when the ref would be
   * larger than {@link MAX_QUESTION_REF_BYTES} with them.
   */
  readonly question?: { readonly text: string; readonly fields?: readonly string[] };
};

function isSection(block: KnownBlock): block is SectionBlock {
  return block.type === "section" && block.block_id === SlackBlockId.Question;
}

/**
 * The ref of a question posted (or found posted) at `message`, with the question kept when it fits;
 * undefined when Slack gave no usable id for the message.
 */
export function questionRef(
  message: SlackMessageRef,
  text: string,
  blocks: readonly KnownBlock[],
): SlackQuestionRef | undefined {
  if (!CONVERSATION_ID.test(message.channel) || !MESSAGE_TS.test(message.ts)) return undefined;
  const where: SlackQuestionRef = { v: REF_VERSION, channel: message.channel, ts: message.ts };
  const section = blocks.find(isSection);
  // The notification text is the section's text as long as it was not clipped; a clipped one is too large anyway.
  if (section?.text?.text !== text) return where;
  const fields = (section.fields ?? []).map((field) => field.text);
  const kept: SlackQuestionRef = {
    ...where,
    question: { text, ...(fields.length === 0 ? {} : { fields }) },
  };
  return Buffer.byteLength(JSON.stringify(kept), "utf8") <= MAX_QUESTION_REF_BYTES ? kept : where;
}

/** A withdrawal's ref read as this package wrote it, or undefined when it is missing or not one of ours. */
export function readQuestionRef(ref: unknown): SlackQuestionRef | undefined {
  if (typeof ref !== "object" || ref === null || Array.isArray(ref)) return undefined;
  const { v, channel, ts, question } = ref as Record<string, unknown>;
  if (v !== REF_VERSION || typeof channel !== "string" || typeof ts !== "string") return undefined;
  if (!CONVERSATION_ID.test(channel) || !MESSAGE_TS.test(ts)) return undefined;
  const kept = readQuestion(question);
  return { v: REF_VERSION, channel, ts, ...(kept === undefined ? {} : { question: kept }) };
}

function readQuestion(question: unknown): SlackQuestionRef["question"] {
  if (typeof question !== "object" || question === null || Array.isArray(question)) return undefined;
  const { text, fields } = question as Record<string, unknown>;
  if (typeof text !== "string" || text.trim() === "") return undefined;
  if (fields === undefined) return { text };
  if (
    !Array.isArray(fields) ||
    fields.length > MAX_FIELDS ||
    !fields.every((field) => typeof field === "string" && field !== "")
  ) {
    return undefined;
  }
  return { text, fields: fields as string[] };
}

/**
 * The message a ref points at: with the question's blocks when the ref kept them (nothing to read),
 * else only where it is (read back before it is edited).
 */
export function messageOfRef(ref: SlackQuestionRef): SlackPostedMessage {
  const { channel, ts, question } = ref;
  if (question === undefined) return { channel, ts };
  const section: SectionBlock = {
    type: "section",
    block_id: SlackBlockId.Question,
    text: { type: "mrkdwn", text: question.text },
    ...(question.fields === undefined
      ? {}
      : { fields: question.fields.map((text) => ({ type: "mrkdwn" as const, text })) }),
  };
  return { channel, ts, text: question.text, blocks: [section] };
}
