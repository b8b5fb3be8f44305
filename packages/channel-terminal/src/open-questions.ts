import { type App, PauseStatus, type PauseSummary } from "@agboss/core";
import type { OpenQuestion } from "./open-question.js";
import { TERMINAL_USER_CHANNEL } from "./terminal-user-channel-name.js";

/** Who is asked: the thread's owner, in a tenant. */
export interface QuestionsFor {
  /** The owner of the threads whose questions are listed. */
  readonly ownerId: string;
  /** Default `default`. */
  readonly tenantId?: string;
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
 * The questions {@link TerminalUserChannel} asked `ownerId` that still wait, oldest first. Read from the
 * store each time, so questions answered elsewhere drop out and a fresh process sees every one.
 */
export async function openQuestions(app: App, who: QuestionsFor): Promise<OpenQuestion[]> {
  const tenantId = who.tenantId ?? "default";
  const pending = await app.pauses.list({
    tenantId,
    status: PauseStatus.Pending,
    role: TERMINAL_USER_CHANNEL,
  });
  // The inbox does not filter by owner, so each thread's owner is read once.
  const owners = new Map<string, string | undefined>();
  const questions: OpenQuestion[] = [];
  for (const summary of pending) {
    if (summary.pauseId === undefined) continue;
    if (!owners.has(summary.threadId)) {
      const thread = await app.store.threads.findByTenantIdAndThreadId(tenantId, summary.threadId);
      owners.set(summary.threadId, thread?.ownerId);
    }
    if (owners.get(summary.threadId) !== who.ownerId) continue;
    const ask = askOf(summary);
    questions.push({
      pauseId: summary.pauseId,
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
