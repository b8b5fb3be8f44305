import { AgbossError } from "../errors/agboss-error.js";
import { ErrorCode } from "../errors/error-codes.js";
import type { PauseResolution, PauseStatus } from "./pause-status.js";

/** No pause with this id in this tenant: it never existed, belongs to another tenant, or was removed after retention. */
export class UnknownPauseError extends AgbossError {
  static override readonly kind: string = "UnknownPauseError";
  readonly pauseId: string;
  constructor(pauseId: string) {
    super(
      ErrorCode.PauseUnknown,
      `No pause "${pauseId}" is known. Answer 404: it does not exist, or it was removed after its retention.`,
    );
    this.pauseId = pauseId;
  }
}

/**
 * The pause is not waiting any more: a double click, a webhook retry, or a late answer to a withdrawn
 * question. It says how, when and by whom it was resolved, so a webhook can answer idempotently.
 */
export class NotPausedError extends AgbossError {
  static override readonly kind: string = "NotPausedError";
  readonly pauseId: string;
  readonly status: PauseStatus;
  readonly resolution: PauseResolution | undefined;
  /** Who answered it, when someone did. */
  readonly responder: string | undefined;
  /** ISO 8601, when it was resolved. */
  readonly resolvedAt: string | undefined;

  constructor(args: {
    pauseId: string;
    status: PauseStatus;
    resolution?: PauseResolution | undefined;
    responder?: string | undefined;
    resolvedAt?: number | undefined;
  }) {
    const at = args.resolvedAt === undefined ? undefined : new Date(args.resolvedAt).toISOString();
    const how = args.resolution === undefined ? args.status : args.resolution;
    const by = args.responder === undefined ? "" : ` by ${args.responder}`;
    super(
      ErrorCode.NotPaused,
      `Pause "${args.pauseId}" is not waiting: it was ${how}${by}${at === undefined ? "" : ` at ${at}`}. Nothing was changed; treat this answer as a duplicate.`,
    );
    this.pauseId = args.pauseId;
    this.status = args.status;
    this.resolution = args.resolution;
    this.responder = args.responder;
    this.resolvedAt = at;
  }
}

/** The pause was answered with the wrong credential for who may answer it. */
export class PauseAnswererError extends AgbossError {
  static override readonly kind: string = "PauseAnswererError";
  constructor(pauseId: string, message: string) {
    super(ErrorCode.PauseWrongAnswerer, `Pause "${pauseId}": ${message} The pause keeps waiting.`);
  }
}

/** A free-text reply was given for a role with no reply interpreter. */
export class ReplyInterpreterMissingError extends AgbossError {
  static override readonly kind: string = "ReplyInterpreterMissingError";
  constructor(pauseId: string, channel: string) {
    super(
      ErrorCode.PauseNoReplyInterpreter,
      `Pause "${pauseId}" was answered with a reply, but channel "${channel}" has no replyInterpreter. ` +
        "Answer with a decision, or name a @ReplyInterpreter on the role. The pause is untouched.",
    );
  }
}

/** A reply could not be read as a valid answer; the pause stays Pending, so ask for a clearer answer. */
export class UninterpretableReplyError extends AgbossError {
  static override readonly kind: string = "UninterpretableReplyError";
  /** Why: the interpreter's own reason, or the error's message. */
  readonly reason: string;
  constructor(pauseId: string, reason: string, options: { cause?: unknown } = {}) {
    super(
      ErrorCode.PauseUninterpretableReply,
      `The reply to pause "${pauseId}" could not be read: ${reason} The pause keeps waiting.`,
      options,
    );
    this.reason = reason;
  }
}

/** A store was asked to create a pause whose id another pause of the tenant already has. */
export class PauseIdTakenError extends AgbossError {
  static override readonly kind: string = "PauseIdTakenError";
  constructor(pauseId: string) {
    super(
      ErrorCode.PauseIdTaken,
      `Another pause already has the id "${pauseId}". Pause ids are random 128-bit values: a repeat means ` +
        "the caller reused one; create the pause with a fresh id.",
    );
  }
}

/**
 * Nobody answered a pause before its deadline, and its role's expiry outcome is to fail the step
 * (`ExpiryOutcome.fail(…)`): the waiting agent fails with this error as its cause.
 */
export class PauseExpiredError extends AgbossError {
  static override readonly kind: string = "PauseExpiredError";
  readonly pauseId: string;
  /** The role that was not answered in time. */
  readonly channel: string;
  constructor(pauseId: string, channel: string, message: string) {
    super(
      ErrorCode.PauseExpired,
      `Nobody answered ${channel} about pause "${pauseId}" before its deadline: ${message}`,
    );
    this.pauseId = pauseId;
    this.channel = channel;
  }
}
