import { type App, PauseAnswerer } from "@agboss/core";
import { appInternals } from "@agboss/core/internal";
import { DEFAULT_MAX_BODY_BYTES } from "@agboss/http";
import { InboxErrorCode, inboxError } from "./inbox-errors.js";
import type { AgbossInboxOptions } from "./inbox-options.js";
import { PauseViews } from "./pause-view.js";

/** @internal What every route reads. */
export interface InboxContext {
  readonly app: App;
  readonly options: AgbossInboxOptions;
  readonly views: PauseViews;
  /** The roles of the application whose pauses are answered through a channel. */
  readonly channelRoles: ReadonlySet<string>;
  readonly pollIntervalMs: number;
  readonly maxPauses: number;
  readonly maxBodyBytes: number;
  readonly title: string;
  readonly internals: ReturnType<typeof appInternals>;
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw inboxError(
      500,
      InboxErrorCode.BadOption,
      `createAgbossInbox: ${name} must be a positive whole number, not ${value}.`,
    );
  return value;
}

/** @internal */
export function inboxContext(app: App, options: AgbossInboxOptions): InboxContext {
  const internals = appInternals(app);
  const channelRoles = new Set<string>();
  for (const agent of internals.assembled.agents.values()) {
    for (const tool of agent.tools.values()) {
      if (tool.channel?.answeredBy === PauseAnswerer.Channel) channelRoles.add(tool.channel.name);
    }
  }
  if (options.publicPath !== undefined && !/^\/(?:.*\/)?$/.test(options.publicPath))
    throw inboxError(
      500,
      InboxErrorCode.BadOption,
      `createAgbossInbox: publicPath must start and end with "/", like "/inbox/", not "${options.publicPath}".`,
    );
  return {
    app,
    options,
    views: new PauseViews(internals.assembled),
    channelRoles,
    pollIntervalMs: positive("pollIntervalMs", options.pollIntervalMs ?? 1000),
    maxPauses: positive("maxPauses", options.maxPauses ?? 200),
    maxBodyBytes: positive("maxBodyBytes", options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES),
    title: options.title ?? `Inbox · ${app.name}`,
    internals,
  };
}
