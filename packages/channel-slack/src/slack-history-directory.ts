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
  /**
   * Pages read at most when withdrawing a question whose pause has no ref (asked by an earlier
   * version, or by a `send` of your own). Default 5: the conversation's 1,000 latest messages.
   */
  readonly maxPages?: number;
  /** Pages read at most before a post (the retried-send check). Default 1. */
  readonly recentPages?: number;
}

/**
 * Finds a pause's message by reading the conversation's history with its metadata
 * (`conversations.history`, `include_all_metadata`), newest first, and matching the pauseId in it.
 * It keeps nothing, so every instance finds the same message; the price is a bounded search.
 *
 * It is asked before every post (one page: a retried send posted moments ago), and on `withdraw`
 * only for a pause that kept no ref: the ask methods return one, which the pause keeps, so a
 * withdrawal normally goes straight to its message. Searching, it reads up to `pageSize × maxPages`
 * messages; a question older than that is not found, and its `withdraw` leaves the buttons in place
 * (a later click is told the question is closed).
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
