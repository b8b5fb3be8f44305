import type { KnownBlock, MessageMetadata } from "@slack/types";
import type { WebClient } from "@slack/web-api";
import {
  pauseMetadata,
  readPauseMetadata,
  type SlackPauseMetadata,
  type SlackQuestionState,
} from "./pause-metadata.js";
import { closedBlocks } from "./question-blocks.js";
import type { SlackMessageRef, SlackPostedMessage } from "./slack-message-directory.js";
import { type QuestionOutcome, statusLine } from "./status-lines.js";

/** A message as read back, with the app that posted it. @internal */
export interface ReadMessage extends SlackPostedMessage {
  readonly appId?: string | undefined;
}

/** The Web API calls both sides make on question messages. @internal */
export class QuestionMessages {
  constructor(readonly client: WebClient) {}

  /** Posts a question; returns where it landed. */
  async post(args: {
    channel: string;
    text: string;
    blocks: KnownBlock[];
    metadata: MessageMetadata;
  }): Promise<SlackMessageRef> {
    const result = await this.client.chat.postMessage({
      channel: args.channel,
      text: args.text,
      blocks: args.blocks,
      metadata: args.metadata,
      unfurl_links: false,
      unfurl_media: false,
    });
    return { channel: result.channel ?? args.channel, ts: result.ts ?? "" };
  }

  /** One top-level message read back with its metadata, or undefined when it is gone. */
  async read(ref: SlackMessageRef): Promise<ReadMessage | undefined> {
    const result = await this.client.conversations.history({
      channel: ref.channel,
      latest: ref.ts,
      inclusive: true,
      limit: 1,
      include_all_metadata: true,
    });
    const message = result.messages?.[0];
    if (message === undefined || message.ts !== ref.ts) return undefined;
    return {
      channel: ref.channel,
      ts: ref.ts,
      text: message.text,
      blocks: message.blocks,
      metadata: readPauseMetadata(message.metadata),
      ...(message.app_id === undefined ? {} : { appId: message.app_id }),
    };
  }

  /**
   * Replaces the buttons and the hint of a question with what became of it, and marks its metadata
   * with the new state. Reads the message first when its blocks are not at hand.
   */
  async close(
    message: SlackPostedMessage,
    pause: SlackPauseMetadata,
    state: SlackQuestionState,
    outcome: QuestionOutcome,
  ): Promise<void> {
    let { blocks, text } = message;
    if (blocks === undefined) {
      const read = await this.read(message);
      blocks = read?.blocks;
      text ??= read?.text;
    }
    const fallback = text ?? "A question from AGBoss";
    await this.client.chat.update({
      channel: message.channel,
      ts: message.ts,
      text: fallback,
      blocks: closedBlocks(blocks, fallback, statusLine(outcome)),
      metadata: pauseMetadata({ ...pause, state }),
    });
  }

  /** A message only `user` sees, in the conversation (and the thread, when given). */
  async tell(args: {
    channel: string;
    user: string;
    text: string;
    threadTs?: string | undefined;
  }): Promise<void> {
    await this.client.chat.postEphemeral({
      channel: args.channel,
      user: args.user,
      text: args.text,
      ...(args.threadTs === undefined ? {} : { thread_ts: args.threadTs }),
    });
  }

  /** A reply everyone in the thread sees. */
  async reply(args: { channel: string; threadTs: string; text: string }): Promise<void> {
    await this.client.chat.postMessage({
      channel: args.channel,
      thread_ts: args.threadTs,
      text: args.text,
      unfurl_links: false,
      unfurl_media: false,
    });
  }
}
