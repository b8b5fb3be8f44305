import type { PauseKind } from "@agboss/core";
import type { ActionsBlock, Button, ContextBlock, KnownBlock, SectionBlock } from "@slack/types";
import { encodeButtonValue, MAX_BUTTON_VALUE } from "./button-value.js";
import { clip } from "./mrkdwn.js";
import { SlackActionId, SlackBlockId } from "./slack-action-id.js";
import type { SlackApprovalOptions, SlackQuestionOptions } from "./slack-ask-options.js";
import { SlackChannelError, SlackErrorCode } from "./slack-channel-error.js";

/** What a question message is built from. @internal */
export interface QuestionMessage {
  readonly pauseId: string;
  readonly tenantId: string;
  readonly kind: PauseKind;
  readonly options: SlackApprovalOptions | SlackQuestionOptions;
}

const MAX_SECTION_TEXT = 3000;
const MAX_FIELDS = 10;
const MAX_CHOICES = 5;
const MAX_LABEL = 75;

function questionSection(options: QuestionMessage["options"]): SectionBlock {
  const fields = Object.entries(options.fields ?? {});
  if (fields.length > MAX_FIELDS) {
    throw new SlackChannelError(
      SlackErrorCode.BadSetting,
      `A Slack question shows at most ${MAX_FIELDS} fields; got ${fields.length}. Put the rest in the text.`,
    );
  }
  return {
    type: "section",
    block_id: SlackBlockId.Question,
    text: { type: "mrkdwn", text: clip(options.text, MAX_SECTION_TEXT) },
    ...(fields.length === 0
      ? {}
      : {
          fields: fields.map(([label, value]) => ({
            type: "mrkdwn" as const,
            text: clip(`*${label}*\n${value}`, 2000),
          })),
        }),
  };
}

function button(actionId: string, label: string, value: string, style?: "primary" | "danger"): Button {
  if (value.length > MAX_BUTTON_VALUE) {
    throw new SlackChannelError(
      SlackErrorCode.BadSetting,
      `A button's value holds at most ${MAX_BUTTON_VALUE} characters; the answer of "${label}" makes it ` +
        `${value.length}. Offer a smaller answer, or let people answer in the thread.`,
    );
  }
  return {
    type: "button",
    action_id: actionId,
    text: { type: "plain_text", text: clip(label, MAX_LABEL), emoji: true },
    value,
    ...(style === undefined ? {} : { style }),
  };
}

function buttons(message: QuestionMessage): ActionsBlock | undefined {
  const { pauseId, tenantId, options } = message;
  if (message.kind === "approval") {
    const approval = options as SlackApprovalOptions;
    const value = encodeButtonValue({ pauseId, tenantId });
    return {
      type: "actions",
      block_id: SlackBlockId.Actions,
      elements: [
        button(SlackActionId.Approve, approval.approveLabel ?? "Approve", value, "primary"),
        button(SlackActionId.Reject, approval.rejectLabel ?? "Reject", value, "danger"),
      ],
    };
  }
  const choices = (options as SlackQuestionOptions).choices ?? [];
  if (choices.length === 0) return undefined;
  if (choices.length > MAX_CHOICES) {
    throw new SlackChannelError(
      SlackErrorCode.BadSetting,
      `A Slack question offers at most ${MAX_CHOICES} choices; got ${choices.length}. Let people answer the rest in the thread.`,
    );
  }
  return {
    type: "actions",
    block_id: SlackBlockId.Actions,
    elements: choices.map((choice, index) =>
      button(
        `${SlackActionId.AnswerPrefix}${index}`,
        choice.label,
        encodeButtonValue({ pauseId, tenantId, answer: choice.answer as Record<string, unknown> }),
      ),
    ),
  };
}

function hint(message: QuestionMessage): ContextBlock | undefined {
  const lines: string[] = [];
  if (message.kind === "question") lines.push("Answer in this message's thread.");
  if (message.options.hint !== undefined && message.options.hint.trim() !== "")
    lines.push(message.options.hint);
  if (lines.length === 0) return undefined;
  return {
    type: "context",
    block_id: SlackBlockId.Hint,
    elements: [{ type: "mrkdwn", text: clip(lines.join(" "), MAX_SECTION_TEXT) }],
  };
}

/** The blocks of an open question. @internal */
export function questionBlocks(message: QuestionMessage): KnownBlock[] {
  const blocks: (KnownBlock | undefined)[] = [
    questionSection(message.options),
    buttons(message),
    hint(message),
  ];
  return blocks.filter((block) => block !== undefined);
}

function isQuestionBlock(block: unknown): block is KnownBlock {
  return (
    typeof block === "object" &&
    block !== null &&
    (block as { block_id?: unknown }).block_id === SlackBlockId.Question
  );
}

/**
 * The blocks of a closed question: the question as it was posted, then `status` instead of the
 * buttons and the hint. @internal
 */
export function closedBlocks(
  original: readonly unknown[] | undefined,
  fallbackText: string,
  status: string,
): KnownBlock[] {
  const kept = (original ?? []).filter(isQuestionBlock);
  const question: KnownBlock[] =
    kept.length > 0
      ? kept
      : [
          {
            type: "section",
            block_id: SlackBlockId.Question,
            text: { type: "mrkdwn", text: clip(fallbackText, MAX_SECTION_TEXT) },
          },
        ];
  return [
    ...question,
    {
      type: "context",
      block_id: SlackBlockId.Status,
      elements: [{ type: "mrkdwn", text: clip(status, MAX_SECTION_TEXT) }],
    },
  ];
}

/** True when the message still offers the channel's buttons. @internal */
export function offersButtons(blocks: readonly unknown[] | undefined): boolean {
  return (blocks ?? []).some(
    (block) =>
      typeof block === "object" &&
      block !== null &&
      (block as { block_id?: unknown }).block_id === SlackBlockId.Actions,
  );
}
