import { AgbossError, type ExecutionOutput, ExecutionStatus, NotPausedError, PauseKind } from "@agboss/core";
import type { OpenQuestion } from "./open-question.js";

const MAX_VALUE = 60;

function shortValue(value: unknown): string {
  const text = typeof value === "string" && /^[^\s,=]+$/.test(value) ? value : JSON.stringify(value);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

/** The call's masked arguments on one line: `orderId=ord_9, amountCents=900`. @internal */
export function describeArguments(args: Readonly<Record<string, unknown>>): string {
  const parts = Object.entries(args).map(([key, value]) => `${key}=${shortValue(value)}`);
  return parts.length === 0 ? "no arguments" : parts.join(", ");
}

/**
 * A question as a line of the list: the tool, its masked arguments and its thread; for a question
 * (not an approval), what its channel asks. @internal
 */
export function describeQuestion(question: OpenQuestion): string {
  const line = `${question.tool} (${describeArguments(question.arguments)}) · thread ${question.threadId}`;
  if (question.kind !== PauseKind.Question) return line;
  return `${line} · asks: ${question.channelDescription || question.channel}`;
}

/** What the execution did after an answer. @internal */
export function describeResult(result: ExecutionOutput): string {
  if (result.status === ExecutionStatus.Completed) {
    return `execution ${result.executionId} completed\n  output: ${JSON.stringify(result.output)}`;
  }
  if (result.status === ExecutionStatus.Paused) {
    const n = result.pending.length;
    return `execution ${result.executionId} waits for ${n} more answer${n === 1 ? "" : "s"}`;
  }
  return `execution ${result.executionId} is ${result.status}`;
}

/** A failed resume in a sentence, without a stack trace. @internal */
export function describeResumeError(error: unknown): string {
  if (error instanceof NotPausedError) {
    const how = error.resolution ?? error.status;
    const by = error.responder === undefined ? "" : ` by ${error.responder}`;
    const at = error.resolvedAt === undefined ? "" : ` at ${error.resolvedAt}`;
    return `That question is no longer open: it was already ${how}${by}${at}. Nothing changed.`;
  }
  if (error instanceof AgbossError) return `${error.message} (${error.code})`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
