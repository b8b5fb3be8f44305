import { Injectable, type PauseKind } from "@agboss/core";

/** Where a question stands in the outbox. */
export type OutboxState = "open" | "answered" | "withdrawn";

/** One question posted to the desk's staff (finance managers, warehouse leads). */
export interface OutboxMessage {
  readonly pauseId: string;
  /** The role that asked, e.g. `refund-approval-channel`. */
  readonly channel: string;
  /**
   * `approval` (answer with a button or words at POST /webhooks/approval) or `question` (answer with
   * the role's answer or words at POST /webhooks/answer).
   */
  readonly kind: PauseKind;
  readonly tenantId: string;
  readonly threadId: string;
  /** The text a manager would read. */
  readonly question: string;
  /** The tool's arguments, as the channel received them. */
  readonly arguments: Record<string, unknown>;
  /** How a manager can answer in words. */
  readonly howToAnswer: string;
  readonly postedAt: string;
  state: OutboxState;
  /** Who answered, or why the question was taken back. */
  note?: string;
}

/**
 * The stand-in for a chat room: channels append their questions here and mark them withdrawn; the
 * approval webhook marks them answered. It lives in one process's memory, as a Slack channel would
 * live elsewhere; nothing the answer needs is kept here (the pause is in the store).
 */
@Injectable()
export class Outbox {
  readonly #messages: OutboxMessage[] = [];

  /** Posts a question; posting the same pause twice keeps the first (the pauseId is an idempotency key). */
  post(message: Omit<OutboxMessage, "postedAt" | "state">): void {
    if (this.#messages.some((m) => m.pauseId === message.pauseId)) return;
    this.#messages.push({ ...message, postedAt: new Date().toISOString(), state: "open" });
  }

  /** Marks an open question as answered or withdrawn; unknown ids are ignored. */
  settle(pauseId: string, state: Exclude<OutboxState, "open">, note: string): void {
    const message = this.#messages.find((m) => m.pauseId === pauseId);
    if (message === undefined || message.state !== "open") return;
    message.state = state;
    message.note = note;
  }

  /** Every question, oldest first. */
  list(): readonly OutboxMessage[] {
    return this.#messages.map((m) => ({ ...m }));
  }
}
