import { type AnyClass, type App, PauseKind, PauseStatus, type PauseSummary } from "@agboss/core";
import { type AnsweredChannel, answeredChannels } from "./answered-channel.js";
import type { OpenQuestion } from "./open-question.js";

/** Who is asked: the thread's owner, in a tenant; and which channels besides `terminal-user-channel`. */
export interface QuestionsFor {
  /** The owner of the threads whose questions are listed. */
  readonly ownerId: string;
  /** Default `default`. */
  readonly tenantId?: string;
  /**
   * Channel roles answered by the thread's owner whose open pauses are listed too, beside
   * {@link TerminalUserChannel}'s: question roles (answered with their `answer` DTO, or in words when
   * they have a reply interpreter) and approval roles. A role's `@Channel` implementation may be given
   * instead of the role. A role answered by `PauseAnswerer.Channel` is refused with a `TypeError`.
   */
  readonly roles?: readonly AnyClass[];
}

function askOf(summary: PauseSummary): { tool: string; arguments: Record<string, unknown> } {
  const ask = (typeof summary.ask === "object" && summary.ask !== null ? summary.ask : {}) as Record<
    string,
    unknown
  >;
  const args = ask.arguments;
  return {
    tool: typeof ask.tool === "string" ? ask.tool : "(unknown tool)",
    arguments: typeof args === "object" && args !== null ? (args as Record<string, unknown>) : {},
  };
}

/**
 * The questions {@link TerminalUserChannel} (and the channels of `roles`) asked `ownerId` that still
 * wait, oldest first. Read from the store each time, so questions answered elsewhere drop out and a
 * fresh process sees every one.
 */
export async function openQuestions(app: App, who: QuestionsFor): Promise<OpenQuestion[]> {
  const tenantId = who.tenantId ?? "default";
  const channels = answeredChannels(who.roles);
  const pending: { summary: PauseSummary; channel: AnsweredChannel }[] = [];
  for (const channel of channels.values()) {
    const listed = await app.pauses.list({
      tenantId,
      status: PauseStatus.Pending,
      role: channel.name,
      ownerId: who.ownerId,
    });
    for (const summary of listed) pending.push({ summary, channel });
  }
  const questions: OpenQuestion[] = [];
  for (const { summary, channel } of pending) {
    if (summary.pauseId === undefined) continue;
    // A question is answered with its role's DTO; without it in hand there is no form to show.
    if (summary.kind === PauseKind.Question && channel.answer === undefined) continue;
    const ask = askOf(summary);
    questions.push({
      pauseId: summary.pauseId,
      kind: summary.kind,
      channel: channel.name,
      channelDescription: channel.description,
      answer: summary.kind === PauseKind.Question ? channel.answer : undefined,
      readsReplies: channel.readsReplies,
      tool: ask.tool,
      agent: summary.agent,
      arguments: ask.arguments,
      threadId: summary.threadId,
      executionId: summary.executionId,
      askedAt: summary.askedAt,
    });
  }
  return questions.sort((a, b) => a.askedAt.localeCompare(b.askedAt));
}
