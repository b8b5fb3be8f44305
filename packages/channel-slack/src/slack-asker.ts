import {
  type ChannelAsk,
  ChannelOutcome,
  type ChannelReminder,
  type ChannelWithdrawal,
  CLOCK,
  type Clock,
  ExecutionContext,
  Injectable,
  LOGGER,
  type Logger,
  LogLevel,
  type OnInit,
  PauseKind,
  type Provider,
} from "@agboss/core";
import type { KnownBlock } from "@slack/types";
import { WebClient } from "@slack/web-api";
import { slackDate } from "./mrkdwn.js";
import { pauseMetadata, type SlackPauseMetadata, SlackQuestionState } from "./pause-metadata.js";
import { questionBlocks } from "./question-blocks.js";
import { QuestionMessages } from "./question-messages.js";
import { type ResolvedSlackSettings, resolveSlackSettings } from "./resolve-slack-settings.js";
import type {
  SlackApprovalOptions,
  SlackAskOptions,
  SlackQuestionOptions,
  SlackRemindOptions,
  SlackWithdrawOptions,
} from "./slack-ask-options.js";
import { SlackChannelError, SlackErrorCode } from "./slack-channel-error.js";
import { slackErrorText } from "./slack-error-text.js";
import { SlackHistoryDirectory } from "./slack-history-directory.js";
import type {
  SlackMessageDirectory,
  SlackMessageRef,
  SlackPostedMessage,
} from "./slack-message-directory.js";
import { messageOfRef, questionRef, readQuestionRef } from "./slack-question-ref.js";
import type { SlackSettings } from "./slack-settings.js";

/** What the webhook shares with the asker of the same application. @internal */
export interface SlackAskerInternals {
  readonly messages: QuestionMessages;
  readonly settings: ResolvedSlackSettings;
  readonly logger: Logger;
  readonly clock: Clock;
}

const internals = new WeakMap<SlackAsker, () => SlackAskerInternals>();

/** The asker's connection and services, for the webhook. @internal */
export function slackAskerInternals(asker: SlackAsker): SlackAskerInternals {
  const read = internals.get(asker);
  if (read === undefined) throw new TypeError("Not a SlackAsker made by @agboss/channel-slack.");
  return read();
}

/**
 * Posts a channel role's questions to Slack and takes them back: the service a role's `@Channel`
 * implementation calls in `send` and `withdraw`. It keeps nothing between calls (the pause lives in
 * the store, with where its message is; the message in Slack), so any instance can send, withdraw or
 * answer.
 *
 * Register it in `providers` (settings from the environment: `SLACK_BOT_TOKEN`, and
 * `SLACK_SIGNING_SECRET` for the webhook), or as `SlackAsker.with({ … })`. A missing token fails
 * `createApp`, naming the variable to set.
 *
 * @example
 * @Channel({ name: "slack-deploy-approval-channel", description: "Asks #deploys", deps: [SlackAsker] })
 * export class SlackDeployApprovalChannel extends DeployApprovalChannel {
 *   constructor(private readonly slack: SlackAsker) { super(); }
 *   send(ask: ChannelAsk<DeployApprovalChannel>) {
 *     return this.slack.askApproval(ask, { channel: "C0123DEPLOY", text: `Deploy *${ask.value.arguments.service}*?` });
 *   }
 *   override withdraw(withdrawal: ChannelWithdrawal<DeployApprovalChannel>) {
 *     return this.slack.withdraw(withdrawal, { channel: "C0123DEPLOY" });
 *   }
 * }
 */
@Injectable({ deps: [ExecutionContext, LOGGER, CLOCK] })
export class SlackAsker implements OnInit {
  readonly #context: ExecutionContext;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #settings: SlackSettings;
  #resolved: ResolvedSlackSettings | undefined;
  #messages: QuestionMessages | undefined;
  #directory: SlackMessageDirectory | undefined;

  /** The container makes it; use {@link SlackAsker.with} to give settings in code. */
  constructor(context: ExecutionContext, logger: Logger, clock: Clock, settings: SlackSettings = {}) {
    this.#context = context;
    this.#logger = logger;
    this.#clock = clock;
    this.#settings = Object.freeze({ ...settings });
    internals.set(this, () => {
      this.#start();
      return {
        messages: this.#messages as QuestionMessages,
        settings: this.#resolved as ResolvedSlackSettings,
        logger: this.#logger,
        clock: this.#clock,
      };
    });
  }

  /**
   * A provider for `createApp({ providers })` or `@Application({ providers })` with settings given in
   * code; what they leave out is still read from the environment.
   *
   * @example
   * const app = await createApp(DeployApplication, { providers: [SlackAsker.with({ apiUrl: "http://127.0.0.1:4100/api/" })] });
   */
  static with(settings: SlackSettings): Provider {
    return {
      provide: SlackAsker,
      useFactory: (context: ExecutionContext, logger: Logger, clock: Clock) =>
        new SlackAsker(context, logger, clock, settings),
      deps: [ExecutionContext, LOGGER, CLOCK],
    };
  }

  /** Reads the settings and makes the client; a missing token fails the application's start. */
  onInit(): void {
    this.#start();
  }

  /** The `WebClient` the channel posts with, for calls of your own. */
  get client(): WebClient {
    return this.#start().client;
  }

  /** Where pauses' messages are found again by pauseId: before a post, and to withdraw a pause that kept no ref. */
  get directory(): SlackMessageDirectory {
    this.#start();
    return this.#directory as SlackMessageDirectory;
  }

  /**
   * Posts an approval: `options.text`, then Approve and Reject buttons that answer the pause with
   * `{ approved }`, the pause in the message's metadata and in the buttons' values (never in the
   * text). A send retried after a crash finds its earlier message and does not post again.
   *
   * Returns `ChannelOutcome.awaitReply({ ref })`, the ref saying where the message is (a
   * `SlackQuestionRef`): the pause keeps it, and {@link SlackAsker.withdraw} edits that message with
   * no search. Return the outcome as it is.
   */
  askApproval<TRole>(ask: ChannelAsk<TRole>, options: SlackApprovalOptions): Promise<ChannelOutcome<TRole>> {
    return this.#ask(ask, PauseKind.Approval, options);
  }

  /**
   * Posts a question of a question role: `options.text`, a line asking to answer in the message's
   * thread (where the role's reply interpreter reads the answer), and `options.choices` as buttons.
   * Like {@link SlackAsker.askApproval}, it returns `awaitReply({ ref })` for the pause to keep.
   */
  askQuestion<TRole>(
    ask: ChannelAsk<TRole>,
    options: SlackQuestionOptions<TRole>,
  ): Promise<ChannelOutcome<TRole>> {
    return this.#ask(ask, PauseKind.Question, options);
  }

  /**
   * Takes a question back: its message keeps the question, loses its buttons and says why it closed.
   * The message is the one `withdrawal.ref` names (kept with the pause by the ask methods), edited with
   * one `chat.update` and no history read. A withdrawal without that ref (a pause asked by an earlier
   * version, or by a `send` that returned an outcome of its own) asks the {@link SlackMessageDirectory}
   * instead. A message that cannot be found is left as it is, with a note in the log; a click on it is
   * then told the question is closed.
   */
  async withdraw<TRole>(withdrawal: ChannelWithdrawal<TRole>, options: SlackWithdrawOptions): Promise<void> {
    const channel = conversationOf(options.channel);
    const { messages } = this.#start();
    const ref = readQuestionRef(withdrawal.ref);
    if (ref === undefined && withdrawal.ref !== undefined && withdrawal.ref !== null) {
      this.#log(
        LogLevel.Debug,
        "slack.withdraw-ref-unread",
        "The pause's ref is not one this channel wrote; the directory is asked for the message instead.",
        { channel, tool: withdrawal.value.tool },
      );
    }
    const found =
      ref === undefined
        ? await this.directory.find({ pauseId: withdrawal.pauseId, channel })
        : messageOfRef(ref);
    let message: SlackPostedMessage | undefined = found;
    if (found !== undefined && found.blocks === undefined) {
      // A ref names the message itself: not there means deleted. A directory may hand back less than it found.
      message = (await messages.read(found)) ?? (ref === undefined ? found : undefined);
    }
    if (message === undefined) {
      this.#notFound(ref?.channel ?? channel, withdrawal.value.tool, ref !== undefined);
      return;
    }
    if (message.metadata?.state === SlackQuestionState.Withdrawn) return;
    const pause: SlackPauseMetadata = message.metadata ?? {
      pauseId: withdrawal.pauseId,
      tenantId: this.#context.tenant.tenantId,
      kind: withdrawal.kind,
      state: SlackQuestionState.Open,
    };
    try {
      await messages.close(message, pause, SlackQuestionState.Withdrawn, {
        kind: "withdrawn",
        resolution: withdrawal.resolution,
        note: options.note,
      });
    } catch (error) {
      // Deleted since it was posted: there are no buttons left to take back.
      if (slackErrorText(error) !== "message_not_found") throw error;
      this.#notFound(message.channel, withdrawal.value.tool, true);
    }
  }

  #notFound(channel: string, tool: string, deleted: boolean): void {
    this.#log(
      LogLevel.Info,
      "slack.withdraw-not-found",
      deleted
        ? "The question's Slack message is gone (deleted); there is nothing to take back."
        : "The question's Slack message was not found; it keeps its buttons.",
      { channel, tool },
    );
  }

  /**
   * Reminds of an unanswered question with a reply in its message's thread (everyone in the thread sees
   * it, and Slack notifies those who follow it). The message is the one `reminder.ref` names; without
   * that ref the {@link SlackMessageDirectory} is asked. A message that cannot be found gets no reminder,
   * with a note in the log.
   */
  async remind<TRole>(reminder: ChannelReminder<TRole>, options: SlackRemindOptions): Promise<void> {
    const channel = conversationOf(options.channel);
    const { messages } = this.#start();
    const ref = readQuestionRef(reminder.ref);
    const found =
      ref === undefined
        ? await this.directory.find({ pauseId: reminder.pauseId, channel })
        : messageOfRef(ref);
    if (found === undefined) {
      this.#notFound(channel, reminder.value.tool, false);
      return;
    }
    const text =
      options.text ??
      `:bell: Reminder ${reminder.reminder}: this question, asked ${slackDate(reminder.askedAt)}, is still waiting for an answer.`;
    await messages.reply({ channel: found.channel, threadTs: found.ts, text });
  }

  async #ask<TRole>(
    ask: ChannelAsk<TRole>,
    kind: PauseKind,
    options: SlackAskOptions,
  ): Promise<ChannelOutcome<TRole>> {
    if (ask.kind !== kind) {
      // Approve / Reject on a question (or choices on an approval) would be refused at every click.
      throw new SlackChannelError(
        SlackErrorCode.BadSetting,
        ask.kind === PauseKind.Approval
          ? `The pause of ${ask.value.tool} is an approval: ask it with askApproval.`
          : `The pause of ${ask.value.tool} is a question of a question role: ask it with askQuestion.`,
      );
    }
    const channel = conversationOf(options.channel);
    const { messages } = this.#start();
    const pause: SlackPauseMetadata = {
      pauseId: ask.pauseId,
      tenantId: this.#context.tenant.tenantId,
      kind,
      state: SlackQuestionState.Open,
    };
    // Built first, so that options Slack would refuse fail before anything is posted.
    const blocks = questionBlocks({ pauseId: pause.pauseId, tenantId: pause.tenantId, kind, options });
    const earlier = await this.#alreadyPosted(pause.pauseId, channel, ask.value.tool);
    if (earlier !== undefined) return awaitReplyAt(earlier, options.text, blocks);
    let posted: SlackMessageRef;
    try {
      posted = await messages.post({ channel, text: options.text, blocks, metadata: pauseMetadata(pause) });
    } catch (cause) {
      throw new SlackChannelError(
        SlackErrorCode.PostFailed,
        `Slack refused the question about ${ask.value.tool} in ${channel}: ${slackErrorText(cause)}. Check ` +
          "that the bot token is valid, that the app has the chat:write scope, and that the bot is a member " +
          "of the conversation (/invite it).",
        { cause },
      );
    }
    try {
      await this.directory.remember?.(pause.pauseId, posted);
    } catch (error) {
      this.#log(
        LogLevel.Warn,
        "slack.remember-failed",
        "The directory could not note where a question was posted.",
        {
          channel,
          tool: ask.value.tool,
          error: slackErrorText(error),
        },
      );
    }
    return awaitReplyAt(posted, options.text, blocks);
  }

  /** The message an earlier try of this send already posted, or undefined. */
  async #alreadyPosted(pauseId: string, channel: string, tool: string): Promise<SlackMessageRef | undefined> {
    try {
      const found = await this.directory.find({ pauseId, channel, recent: true });
      if (found === undefined) return undefined;
      this.#log(
        LogLevel.Info,
        "slack.already-posted",
        "The question was posted by an earlier try; not posting it again.",
        {
          channel,
          tool,
        },
      );
      return found;
    } catch (error) {
      // The check only saves a duplicate; a history read refused (no channels:history) must not stop the question.
      this.#log(
        LogLevel.Warn,
        "slack.lookup-failed",
        "Could not read the conversation to check for an earlier post.",
        {
          channel,
          tool,
          error: slackErrorText(error),
        },
      );
      return undefined;
    }
  }

  #start(): { messages: QuestionMessages; client: WebClient } {
    if (this.#messages === undefined) {
      const resolved = resolveSlackSettings(this.#settings);
      const client =
        this.#settings.client ??
        new WebClient(resolved.botToken, {
          slackApiUrl: resolved.apiUrl,
          timeout: 10_000,
          retryConfig: { retries: 2, factor: 2, minTimeout: 250, maxTimeout: 2_000 },
          ...this.#settings.clientOptions,
        });
      this.#resolved = resolved;
      this.#directory = this.#settings.directory?.(client) ?? new SlackHistoryDirectory(client);
      this.#messages = new QuestionMessages(client);
    }
    return { messages: this.#messages, client: this.#messages.client };
  }

  #log(level: LogLevel, event: string, message: string, fields: Record<string, unknown>): void {
    const frame = ExecutionContext.current();
    this.#logger.log({
      level,
      event,
      message,
      fields:
        frame === undefined
          ? fields
          : { executionId: frame.executionId, tenantId: frame.tenant.tenantId, ...fields },
      at: this.#clock.now(),
    });
  }
}

/** The pause waits for its answer, keeping where its question is (a `SlackQuestionRef`). */
function awaitReplyAt<TRole>(
  message: SlackMessageRef,
  text: string,
  blocks: readonly KnownBlock[],
): ChannelOutcome<TRole> {
  const ref = questionRef(message, text, blocks);
  return ChannelOutcome.awaitReply<TRole>(ref === undefined ? {} : { ref });
}

/** The conversation id, refusing a `#name`: the message could be posted, but never found again. */
function conversationOf(channel: string): string {
  const id = channel.trim();
  if (id === "" || id.startsWith("#")) {
    throw new SlackChannelError(
      SlackErrorCode.BadSetting,
      `Give the Slack conversation by its id (e.g. C0123ABCD, in the channel's details), not "${channel}": ` +
        "a question is found again by the conversation's id.",
    );
  }
  return id;
}
