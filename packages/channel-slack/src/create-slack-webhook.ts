import {
  AgbossError,
  type App,
  AppClosedError,
  DtoValidationError,
  LogLevel,
  NotPausedError,
  PauseAnswererError,
  PauseResolution,
  PauseStatus,
  ReplyInterpreterMissingError,
  type ResumeRequest,
  StoreUnavailableError,
  ThreadOwnerError,
  UninterpretableReplyError,
  UnknownPauseError,
} from "@agboss/core";
import { decodeButtonValue } from "./button-value.js";
import { bytesOf } from "./bytes-of.js";
import { escapeMrkdwn, mentionOf, slackDate } from "./mrkdwn.js";
import { readPauseMetadata, type SlackPauseMetadata, SlackQuestionState } from "./pause-metadata.js";
import { offersButtons } from "./question-blocks.js";
import type { ReadMessage } from "./question-messages.js";
import { requireSigningSecret } from "./resolve-slack-settings.js";
import { SlackActionId } from "./slack-action-id.js";
import { SlackAsker, type SlackAskerInternals, slackAskerInternals } from "./slack-asker.js";
import { SlackChannelError, SlackErrorCode } from "./slack-channel-error.js";
import { slackErrorText } from "./slack-error-text.js";
import {
  type BlockActionsPayload,
  type EventEnvelope,
  isThreadReply,
  type MessageEvent,
  parseInbound,
} from "./slack-inbound.js";
import type { SlackPostedMessage } from "./slack-message-directory.js";
import { headerOf } from "./slack-request-headers.js";
import { verifySlackSignature } from "./slack-signature.js";
import type {
  SlackAnswerSource,
  SlackWebhook,
  SlackWebhookOptions,
  SlackWebhookRequest,
  SlackWebhookResponse,
} from "./slack-webhook-types.js";
import type { QuestionOutcome } from "./status-lines.js";

/** How many event ids, and threads that are not questions, each instance remembers. */
const REMEMBERED = 1000;

/** How long a thread reply may take to be recorded before Slack is answered anyway (Slack waits 3 s). */
const DEFAULT_REPLY_WAIT_MS = 2000;

/** What to do in Slack once an answer was recorded or refused: update the message, or tell the person. */
type FollowUp = () => Promise<void>;

/** One answer on its way to `app.answer`, and where to report on it. */
interface PendingAnswer {
  readonly request: ResumeRequest;
  readonly source: SlackAnswerSource;
  /** The question's message. */
  readonly message: SlackPostedMessage;
  readonly pause: SlackPauseMetadata;
  /** For a reply: the thread it was written in. */
  readonly threadTs?: string | undefined;
  /** True when Slack delivered this event before (a retry): a duplicate then stays silent. */
  readonly retried: boolean;
}

const EMPTY: SlackWebhookResponse = { status: 200, headers: {}, body: "" };

function text(status: number, body: string): SlackWebhookResponse {
  return { status, headers: { "content-type": "text/plain; charset=utf-8" }, body };
}

/** A set that forgets its oldest entries beyond a size. */
class BoundedSet {
  readonly #items = new Set<string>();
  constructor(readonly size: number) {}
  has(item: string): boolean {
    return this.#items.has(item);
  }
  add(item: string): void {
    this.#items.add(item);
    if (this.#items.size > this.size) this.#items.delete(this.#items.values().next().value as string);
  }
}

class SlackWebhookHandler implements SlackWebhook {
  readonly #app: App;
  readonly #options: SlackWebhookOptions;
  readonly #slack: SlackAskerInternals;
  readonly #signingSecret: string;
  readonly #replyWaitMs: number;
  readonly #running = new Set<Promise<void>>();
  readonly #seenEvents = new BoundedSet(REMEMBERED);
  readonly #notQuestions = new BoundedSet(REMEMBERED);

  constructor(app: App, options: SlackWebhookOptions) {
    this.#app = app;
    this.#options = Object.freeze({ ...options });
    this.#slack = slackAskerInternals(options.asker ?? app.get(SlackAsker));
    this.#signingSecret = requireSigningSecret(options.signingSecret ?? this.#slack.settings.signingSecret);
    this.#replyWaitMs = replyWaitOf(options.replyWaitMs);
  }

  async handle(request: SlackWebhookRequest): Promise<SlackWebhookResponse> {
    const body = bytesOf(request.body);
    const verdict = verifySlackSignature({
      signingSecret: this.#signingSecret,
      body,
      headers: request.headers,
      now: this.#slack.clock.now(),
    });
    if (!verdict.ok) {
      this.#log(LogLevel.Warn, "slack.signature-rejected", `A request was refused: ${verdict.reason}.`, {});
      return text(401, "The request's Slack signature is missing, wrong or too old.");
    }
    let inbound: ReturnType<typeof parseInbound>;
    try {
      inbound = parseInbound(body, headerOf(request.headers, "content-type") ?? "");
    } catch {
      return text(400, "The body is neither an Events API event nor an interactivity payload.");
    }
    const retried = headerOf(request.headers, "x-slack-retry-num") !== undefined;
    switch (inbound.kind) {
      case "url-verification":
        return {
          status: 200,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ challenge: inbound.challenge }),
        };
      case "block-actions":
        // No model reads a click: it is recorded at once, and Slack gets its 200 only then.
        await this.#track(this.#onClick(inbound.payload));
        return EMPTY;
      case "event":
        await this.#onEvent(inbound.envelope, retried);
        return EMPTY;
      default:
        return EMPTY;
    }
  }

  async idle(): Promise<void> {
    for (;;) {
      if (this.#running.size > 0) {
        await Promise.allSettled([...this.#running]);
        continue;
      }
      // The executions the answers moved on, in this app's background.
      await this.#app.idle();
      if (this.#running.size === 0) return;
    }
  }

  /**
   * Tracks one answer: `recording` resolves once the answer is recorded or refused, with what to do in
   * Slack then. The returned promise resolves at that point; the follow-up in Slack, and the move of the
   * execution in the app, go on after it. Failures go to the log.
   */
  #track(recording: Promise<FollowUp | undefined>): Promise<void> {
    const recorded = recording.catch((error: unknown) => {
      this.#failed(error);
      return undefined;
    });
    const task = recorded.then((followUp) => followUp?.()).catch((error: unknown) => this.#failed(error));
    this.#running.add(task);
    void task.finally(() => this.#running.delete(task));
    this.#options.waitUntil?.(task.then(() => this.#app.idle()));
    return recorded.then(() => undefined);
  }

  #failed(error: unknown): void {
    this.#log(LogLevel.Error, "slack.webhook-failed", "Handling a Slack request failed.", {
      error: error instanceof Error ? error.message : String(error),
      ...(error instanceof AgbossError ? { code: error.code } : {}),
    });
  }

  async #onEvent(envelope: EventEnvelope, retried: boolean): Promise<void> {
    if (envelope.event_id !== undefined) {
      if (this.#seenEvents.has(envelope.event_id)) return;
      this.#seenEvents.add(envelope.event_id);
    }
    const event = envelope.event;
    if (!isThreadReply(event)) return;
    // A reply may be read by a model for longer than Slack waits: past replyWaitMs, Slack is answered
    // and the reply is recorded after. A delivery Slack retries meanwhile is recognised by its event_id.
    await within(this.#track(this.#onReply(envelope, event, retried)), this.#replyWaitMs);
  }

  async #onClick(payload: BlockActionsPayload): Promise<FollowUp | undefined> {
    const action = payload.actions?.find(
      (a) =>
        a.action_id === SlackActionId.Approve ||
        a.action_id === SlackActionId.Reject ||
        a.action_id?.startsWith(SlackActionId.AnswerPrefix) === true,
    );
    const value = decodeButtonValue(action?.value);
    const channel = payload.container?.channel_id ?? payload.channel?.id;
    const ts = payload.container?.message_ts ?? payload.message?.ts;
    const userId = payload.user?.id;
    if (
      action === undefined ||
      value === undefined ||
      channel === undefined ||
      ts === undefined ||
      userId === undefined
    ) {
      return undefined;
    }
    const { pauseId } = value;
    let request: ResumeRequest;
    if (action.action_id === SlackActionId.Approve) request = { pauseId, decision: { approved: true } };
    else if (action.action_id === SlackActionId.Reject) request = { pauseId, decision: { approved: false } };
    else request = { pauseId, answer: value.answer ?? {} };
    const recorded = readPauseMetadata(payload.message?.metadata);
    return this.#answer({
      request,
      source: {
        via: "button",
        userId,
        teamId: payload.team?.id ?? payload.user?.team_id,
        enterpriseId: payload.enterprise?.id,
        channelId: channel,
        askedFor: value.tenantId,
      },
      message: { channel, ts, text: payload.message?.text, blocks: payload.message?.blocks },
      pause:
        recorded?.pauseId === pauseId
          ? recorded
          : {
              pauseId,
              tenantId: value.tenantId,
              kind: value.answer === undefined ? "approval" : "question",
              state: SlackQuestionState.Open,
            },
      retried: false,
    });
  }

  async #onReply(
    envelope: EventEnvelope,
    event: MessageEvent & { channel: string; user: string; text: string; thread_ts: string },
    retried: boolean,
  ): Promise<FollowUp | undefined> {
    const key = `${event.channel}/${event.thread_ts}`;
    if (this.#notQuestions.has(key)) return undefined;
    const parent: ReadMessage | undefined = await this.#slack.messages.read({
      channel: event.channel,
      ts: event.thread_ts,
    });
    const pause = parent?.metadata;
    const postedByUs =
      parent?.appId === undefined ||
      envelope.api_app_id === undefined ||
      parent.appId === envelope.api_app_id;
    if (parent === undefined || pause === undefined || !postedByUs) {
      this.#notQuestions.add(key);
      return undefined;
    }
    return this.#answer({
      request: { pauseId: pause.pauseId, reply: event.text },
      source: {
        via: "reply",
        userId: event.user,
        teamId: envelope.team_id ?? event.team,
        enterpriseId: envelope.enterprise_id ?? undefined,
        channelId: event.channel,
        askedFor: pause.tenantId,
      },
      message: parent,
      pause,
      threadTs: event.thread_ts,
      retried,
    });
  }

  /**
   * Records the answer with `app.answer`, which returns once it is stored and audited (a reply read by
   * its interpreter first); the execution moves on in the app's background. Resolves what to do in
   * Slack next: show the answer on the message, or tell the person why it did not count.
   */
  async #answer(pending: PendingAnswer): Promise<FollowUp> {
    const { source } = pending;
    let tenantId: string | undefined;
    try {
      const tenant = this.#options.tenant;
      tenantId = typeof tenant === "function" ? await tenant(source) : (tenant ?? source.askedFor);
      const credential = (await this.#options.answerAs?.(source)) ?? { answeredBy: source.userId };
      await this.#app.answer(pending.request, { tenantId, ...credential });
    } catch (error) {
      const refusedIn = tenantId;
      return () => this.#refused(error, pending, refusedIn);
    }
    const answeredIn = tenantId;
    return async () =>
      this.#close(pending, await this.#outcomeOf(answeredIn, pending.pause.pauseId, source.userId));
  }

  /** What became of a pause, from its record; undefined once the record is gone. */
  async #outcomeOf(
    tenantId: string,
    pauseId: string,
    fallbackBy?: string,
  ): Promise<QuestionOutcome | undefined> {
    const record = await this.#app.store.pauses.findByTenantIdAndPauseId(tenantId, pauseId);
    if (record === undefined) return undefined;
    const at = record.resolvedAt ?? this.#slack.clock.now();
    if (record.status === PauseStatus.Cancelled) {
      const resolution =
        record.resolution === PauseResolution.Withdrawn
          ? PauseResolution.Withdrawn
          : PauseResolution.Cancelled;
      return { kind: "withdrawn", resolution };
    }
    const by = record.answer?.responder ?? fallbackBy;
    if (by === undefined) return { kind: "closed", at };
    const decision = record.answer?.decision as { approved?: unknown; reason?: unknown } | undefined;
    if (decision?.approved === true) return { kind: "approved", by, at };
    if (decision?.approved === false) {
      return {
        kind: "rejected",
        by,
        at,
        reason: typeof decision.reason === "string" ? decision.reason : undefined,
      };
    }
    return { kind: "answered", by, at };
  }

  async #close(pending: PendingAnswer, outcome: QuestionOutcome | undefined): Promise<void> {
    const state = outcome?.kind === "withdrawn" ? SlackQuestionState.Withdrawn : SlackQuestionState.Answered;
    try {
      await this.#slack.messages.close(pending.message, pending.pause, state, outcome ?? { kind: "closed" });
    } catch (error) {
      this.#log(LogLevel.Warn, "slack.update-failed", "The question's message could not be updated.", {
        channel: pending.message.channel,
        error: slackErrorText(error),
      });
    }
  }

  /** Tells the person why their answer did not count; the pause keeps waiting unless it was already closed. */
  async #refused(error: unknown, pending: PendingAnswer, tenantId: string | undefined): Promise<void> {
    const { source, message } = pending;
    const tell = (words: string) => this.#tell(pending, words);
    if (error instanceof UninterpretableReplyError) {
      await this.#say(() =>
        this.#slack.messages.reply({
          channel: message.channel,
          threadTs: pending.threadTs ?? message.ts,
          text: `${mentionOf(source.userId)} I could not read that as an answer: ${escapeMrkdwn(error.reason)}`,
        }),
      );
      return;
    }
    if (error instanceof NotPausedError) {
      if (pending.retried) return;
      await tell(alreadyClosedText(error, pending.source.userId));
      // The message still offers buttons (an update was lost, or two answers crossed): bring it up to date.
      if (tenantId !== undefined && offersButtons(message.blocks))
        await this.#close(pending, await this.#outcomeOf(tenantId, pending.pause.pauseId));
      return;
    }
    if (error instanceof ReplyInterpreterMissingError) {
      await tell("This question takes its buttons only: replies in the thread are not read.");
      return;
    }
    if (error instanceof DtoValidationError) {
      const issues = error.issues
        .map((i) => `${i.path === "" ? "the answer" : i.path}: ${i.message}`)
        .join("; ");
      await tell(`That answer does not fit this question (${escapeMrkdwn(issues)}). Nothing was recorded.`);
      return;
    }
    if (error instanceof UnknownPauseError) {
      this.#log(LogLevel.Warn, "slack.unknown-pause", "An answer named a pause this tenant does not know.", {
        tenantId,
        channel: message.channel,
      });
      await tell(
        "This question is not open here any more: it expired, or it belongs to another application.",
      );
      return;
    }
    if (error instanceof PauseAnswererError || error instanceof ThreadOwnerError) {
      await tell(`You may not answer this question from Slack (${error.code}). Nothing was recorded.`);
      return;
    }
    this.#log(LogLevel.Error, "slack.answer-failed", "Answering a pause from Slack failed.", {
      tenantId,
      channel: message.channel,
      error: error instanceof Error ? error.message : String(error),
      ...(error instanceof AgbossError ? { code: error.code } : {}),
    });
    const code = error instanceof AgbossError ? ` (${error.code})` : "";
    if (error instanceof StoreUnavailableError || error instanceof AppClosedError) {
      // Passing: the question stays open. Answering again is safe either way; had this answer been
      // recorded after all, the next one is told it stands.
      await tell(
        `Your answer could not be recorded just now${code}: the application could not reach its ` +
          "storage. Please answer again in a minute.",
      );
      return;
    }
    await tell(`Your answer could not be recorded${code}. The application's log has the details.`);
  }

  /** A message only the person who answered sees, in the thread when they replied there. */
  #tell(pending: PendingAnswer, words: string): Promise<void> {
    return this.#say(() =>
      this.#slack.messages.tell({
        channel: pending.message.channel,
        user: pending.source.userId,
        text: words,
        threadTs: pending.threadTs,
      }),
    );
  }

  async #say(post: () => Promise<void>): Promise<void> {
    try {
      await post();
    } catch (error) {
      this.#log(LogLevel.Warn, "slack.notice-failed", "A notice could not be posted to Slack.", {
        error: slackErrorText(error),
      });
    }
  }

  #log(level: LogLevel, event: string, message: string, fields: Record<string, unknown>): void {
    this.#slack.logger.log({ level, event, message, fields, at: this.#slack.clock.now() });
  }
}

function replyWaitOf(ms: number | undefined): number {
  if (ms === undefined) return DEFAULT_REPLY_WAIT_MS;
  if (typeof ms !== "number" || Number.isNaN(ms) || ms < 0) {
    throw new SlackChannelError(
      SlackErrorCode.BadSetting,
      `replyWaitMs must be a number of milliseconds, 0 or more, not ${String(ms)}. Slack waits 3 seconds ` +
        "for its answer: keep it under 3000.",
    );
  }
  // setTimeout's largest delay; beyond it the webhook waits as long anyway.
  return Math.min(ms, 2_147_483_647);
}

/** Resolves when `work` does, or after `ms` milliseconds, whichever comes first. */
async function within(work: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function alreadyClosedText(error: NotPausedError, userId: string): string {
  const when = error.resolvedAt === undefined ? "" : ` ${slackDate(error.resolvedAt)}`;
  if (error.status === PauseStatus.Cancelled) {
    return `This question was withdrawn${when}: no answer is needed any more.`;
  }
  // The same person again: a second click, or a retry after an answer whose recording looked lost.
  if (error.responder === userId) {
    return `You already answered this question${when}: that answer is recorded and stands.`;
  }
  if (error.responder !== undefined) {
    return `This question was already answered by ${mentionOf(error.responder)}${when}. Your answer was not recorded.`;
  }
  return `This question was already settled${when}. Your answer was not recorded.`;
}

/**
 * The Slack webhook of an application: one function from a raw request to a response, for any HTTP
 * server (see {@link slackRequestListener} for node:http). Mount it as the app's Interactivity
 * Request URL and its Events API Request URL (one URL serves both).
 *
 * It checks every request's signature (401 when missing, wrong or older than five minutes), answers
 * `url_verification`, and records answers with `app.answer` before acknowledging them: Approve /
 * Reject → `{ pauseId, decision }`, a choice → `{ pauseId, answer }`, a reply in a question's thread →
 * `{ pauseId, reply }` (acknowledged after `replyWaitMs` at the latest, when its interpreter is slow).
 * After the 200 it updates the message to say who answered, or tells the person why their answer did
 * not count, while the app moves the execution on in the background.
 *
 * @example
 * const app = await createApp(DeployApplication);
 * const slack = createSlackWebhook(app);
 * createServer(slackRequestListener(slack)).listen(3000);
 */
export function createSlackWebhook(app: App, options: SlackWebhookOptions = {}): SlackWebhook {
  return new SlackWebhookHandler(app, options);
}
