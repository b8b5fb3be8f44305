import type { WebClient } from "@slack/web-api";
import { readPauseMetadata } from "./pause-metadata.js";
import type {
  SlackMessageDirectory,
  SlackMessageLookup,
  SlackPostedMessage,
} from "./slack-message-directory.js";

/** Options of {@link SlackHistoryDirectory}. */
export interface SlackHistoryDirectoryOptions {
  /** Messages asked for per `conversations.history` call. Default 200, the most Slack advises. */
  readonly pageSize?: number;
  /** Pages read at most when withdrawing. Default 5: the conversation's 1,000 latest messages. */
  readonly maxPages?: number;
  /** Pages read at most before a post (the retried-send check). Default 1. */
  readonly recentPages?: number;
}

/**
 * Finds a pause's message by reading the conversation's history with its metadata
 * (`conversations.history`, `include_all_metadata`), newest first, and matching the pauseId in it.
 * It keeps nothing, so every instance finds the same message; the price is a bounded search. A
 * question older than `pageSize × maxPages` messages is not found: its `withdraw` then leaves the
 * buttons in place (a later click is told the question is closed). In a busy conversation, post the
 * questions to a conversation of their own, or plug in a directory of your own.
 *
 * Needs the `channels:history` scope (`groups:history` for private channels, `im:history` for direct
 * messages).
 */
export class SlackHistoryDirectory implements SlackMessageDirectory {
  readonly #client: WebClient;
  readonly #pageSize: number;
  readonly #maxPages: number;
  readonly #recentPages: number;

  constructor(client: WebClient, options: SlackHistoryDirectoryOptions = {}) {
    this.#client = client;
    this.#pageSize = options.pageSize ?? 200;
    this.#maxPages = options.maxPages ?? 5;
    this.#recentPages = options.recentPages ?? 1;
  }

  async find(lookup: SlackMessageLookup): Promise<SlackPostedMessage | undefined> {
    const pages = lookup.recent === true ? this.#recentPages : this.#maxPages;
    let cursor: string | undefined;
    for (let page = 0; page < pages; page++) {
      const result = await this.#client.conversations.history({
        channel: lookup.channel,
        limit: this.#pageSize,
        include_all_metadata: true,
        ...(cursor === undefined ? {} : { cursor }),
      });
      for (const message of result.messages ?? []) {
        const metadata = readPauseMetadata(message.metadata);
        if (metadata?.pauseId !== lookup.pauseId || message.ts === undefined) continue;
        return {
          channel: lookup.channel,
          ts: message.ts,
          text: message.text,
          blocks: message.blocks,
          metadata,
        };
      }
      cursor = result.response_metadata?.next_cursor;
      if (result.has_more !== true || cursor === undefined || cursor === "") return undefined;
    }
    return undefined;
  }
}
