import type { AssembledTool } from "../assembly/assembled-application.js";
import { DtoValidationError } from "../errors/dto-validation-error.js";
import { ThreadOwnerError } from "../errors/runtime-errors.js";
import { NotPausedError, PauseAnswererError } from "../pauses/pause-errors.js";
import type { PauseRecord } from "../pauses/pause-record.js";
import { PauseAnswerer } from "../pauses/pause-status.js";

/** The longest free-text reply an interpreter is given, in characters. */
export const MAX_REPLY_CHARS = 16_000;
/** The largest decision or answer, as JSON bytes (a question role's answer DTO may add its own limits). */
export const MAX_ANSWER_BYTES = 64 * 1024;
/** The longest `tenantId`, `ownerId` or `answeredBy`, in characters. */
export const MAX_RESPONDER_CHARS = 256;

function jsonBytes(value: unknown): number | undefined {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : Buffer.byteLength(text, "utf8");
  } catch {
    return undefined;
  }
}

/** The shape of `app.resume`'s request, checked before any pause is looked up: exactly one answer. @internal */
export function checkResumeRequest(request: unknown): {
  pauseId: string;
  decision?: unknown;
  answer?: unknown;
  reply?: string;
} {
  const issues: { path: string; message: string }[] = [];
  const r = (typeof request === "object" && request !== null ? request : {}) as Record<string, unknown>;
  if (typeof r.pauseId !== "string" || r.pauseId === "")
    issues.push({ path: "pauseId", message: "a non-empty pauseId is required" });
  const given = (["decision", "answer", "reply"] as const).filter((key) => r[key] !== undefined);
  if (given.length > 1)
    issues.push({
      path: "",
      message: `give exactly one of decision, answer or reply, not ${given.join(" and ")}`,
    });
  if (given.length === 0) issues.push({ path: "", message: "give a decision, an answer or a reply" });
  if (r.reply !== undefined && (typeof r.reply !== "string" || r.reply.trim() === ""))
    issues.push({ path: "reply", message: "a reply must be a non-empty text" });
  else if (typeof r.reply === "string" && r.reply.length > MAX_REPLY_CHARS)
    issues.push({ path: "reply", message: `a reply may be at most ${MAX_REPLY_CHARS} characters` });
  for (const key of ["decision", "answer"] as const) {
    if (r[key] === undefined) continue;
    const bytes = jsonBytes(r[key]);
    if (bytes === undefined || bytes > MAX_ANSWER_BYTES)
      issues.push({
        path: key,
        message:
          bytes === undefined
            ? `${key} must be JSON (records, lists, strings, numbers, booleans)`
            : `${key} may be at most ${MAX_ANSWER_BYTES} bytes of JSON`,
      });
  }
  if (issues.length > 0) throw new DtoValidationError("ResumeRequest", issues);
  return r as { pauseId: string; decision?: unknown; answer?: unknown; reply?: string };
}

/**
 * The credential of `app.resume` / `app.answer`, checked before anything is read: an object whose
 * `tenantId`, `ownerId` and `answeredBy` are texts of at most {@link MAX_RESPONDER_CHARS} characters.
 * @internal
 */
export function checkCredentialShape(options: unknown): {
  tenantId?: string;
  ownerId?: string;
  answeredBy?: string;
} {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new DtoValidationError("ResumeOptions", [
      { path: "", message: "pass the credential: { tenantId, ownerId } or { tenantId, answeredBy }" },
    ]);
  }
  const o = options as Record<string, unknown>;
  const issues: { path: string; message: string }[] = [];
  for (const key of ["tenantId", "ownerId", "answeredBy"] as const) {
    const value = o[key];
    if (value === undefined) continue;
    if (typeof value !== "string") issues.push({ path: key, message: `${key} must be a text` });
    else if (value.length > MAX_RESPONDER_CHARS)
      issues.push({ path: key, message: `${key} may be at most ${MAX_RESPONDER_CHARS} characters` });
  }
  if (issues.length > 0) throw new DtoValidationError("ResumeOptions", issues);
  return o as { tenantId?: string; ownerId?: string; answeredBy?: string };
}

/** @internal A decision for a question role's pause, or an answer for an approval role's: what to send instead. */
export function checkAnswerKind(
  pause: PauseRecord,
  tool: AssembledTool,
  shape: { decision?: unknown; answer?: unknown },
): void {
  const answerDto = tool.channel?.answer;
  if (answerDto !== undefined && shape.decision !== undefined) {
    throw new DtoValidationError("ResumeRequest", [
      {
        path: "decision",
        message: `this pause asks a question of ${pause.channel}: answer it with { answer } (a ${answerDto.name}), not a decision`,
      },
    ]);
  }
  if (answerDto === undefined && shape.answer !== undefined) {
    throw new DtoValidationError("ResumeRequest", [
      {
        path: "answer",
        message: `this pause asks ${pause.channel} to approve a call: answer it with { decision: { approved, reason?, overrideArguments? } }, not an answer`,
      },
    ]);
  }
}

/** Who answers, checked against who may: the thread's owner or a channel-authenticated responder. @internal */
export function checkCredential(
  pause: PauseRecord,
  options: { ownerId?: string; answeredBy?: string },
): string {
  if (pause.answeredBy === PauseAnswerer.ThreadOwner) {
    if (options.answeredBy !== undefined || options.ownerId === undefined) {
      throw new PauseAnswererError(
        pause.pauseId,
        "it is answered by the thread's owner: pass { ownerId }, not answeredBy.",
      );
    }
    if (options.ownerId !== pause.ownerId) throw new ThreadOwnerError(pause.threadId);
    return options.ownerId;
  }
  if (
    options.ownerId !== undefined ||
    typeof options.answeredBy !== "string" ||
    options.answeredBy.trim() === ""
  ) {
    throw new PauseAnswererError(
      pause.pauseId,
      "it is answered through its channel: pass a non-empty { answeredBy }, not ownerId.",
    );
  }
  return options.answeredBy;
}

/** The error for an answer to a pause that is no longer Pending, saying how, when and by whom it closed. @internal */
export function notPaused(pause: PauseRecord): NotPausedError {
  return new NotPausedError({
    pauseId: pause.pauseId,
    status: pause.status,
    resolution: pause.resolution,
    responder: pause.answer?.responder,
    resolvedAt: pause.resolvedAt,
  });
}
