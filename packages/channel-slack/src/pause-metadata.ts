import type { PauseKind } from "@agboss/core";
import type { MessageMetadata } from "@slack/types";

/** The `event_type` of the metadata every question message carries. */
export const PAUSE_EVENT_TYPE = "agboss_pause";

/** Where a question message stands. */
export const SlackQuestionState = {
  /** Waiting for an answer: the buttons (or the thread) take one. */
  Open: "open",
  /** Someone answered; the message says who. */
  Answered: "answered",
  /** The pause closed without an answer; the message says so. */
  Withdrawn: "withdrawn",
} as const;
export type SlackQuestionState = (typeof SlackQuestionState)[keyof typeof SlackQuestionState];

/**
 * What a question message's metadata says about its pause. It is not shown in Slack's interface, but
 * any app with history access to the conversation can read it: the pauseId in it is the right to
 * answer, so post questions only where the people and apps present may answer them.
 */
export interface SlackPauseMetadata {
  readonly pauseId: string;
  /** The tenant the question was asked for. */
  readonly tenantId: string;
  /** `approval` (buttons) or `question` (an answer in the thread). */
  readonly kind: PauseKind;
  readonly state: SlackQuestionState;
}

/** The metadata to post with a question message. */
export function pauseMetadata(pause: SlackPauseMetadata): MessageMetadata {
  return {
    event_type: PAUSE_EVENT_TYPE,
    event_payload: {
      pause_id: pause.pauseId,
      tenant_id: pause.tenantId,
      kind: pause.kind,
      state: pause.state,
    },
  };
}

const KINDS: readonly string[] = ["approval", "question"];
const STATES: readonly string[] = Object.values(SlackQuestionState);

/** The pause a message's metadata names, or undefined when the message is not a question of this channel. */
export function readPauseMetadata(metadata: unknown): SlackPauseMetadata | undefined {
  if (typeof metadata !== "object" || metadata === null) return undefined;
  const { event_type: type, event_payload: payload } = metadata as Record<string, unknown>;
  if (type !== PAUSE_EVENT_TYPE || typeof payload !== "object" || payload === null) return undefined;
  const { pause_id, tenant_id, kind, state } = payload as Record<string, unknown>;
  if (typeof pause_id !== "string" || pause_id === "" || typeof tenant_id !== "string") return undefined;
  return {
    pauseId: pause_id,
    tenantId: tenant_id,
    kind: typeof kind === "string" && KINDS.includes(kind) ? (kind as PauseKind) : "approval",
    state: typeof state === "string" && STATES.includes(state) ? (state as SlackQuestionState) : "open",
  };
}
