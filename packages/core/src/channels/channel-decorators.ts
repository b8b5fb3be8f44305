import { ComponentKind } from "../components/component-kind.js";
import { type AnyClass, componentDecorator } from "../components/component-registry.js";
import type { DtoClass } from "../dto/dto.js";
import type { PauseAnswerer } from "../pauses/pause-status.js";

/** What `@ChannelRole` declares. */
export interface ChannelRoleOptions {
  /** Ends with `-channel`. */
  readonly name: string;
  readonly description: string;
  /** The tool input this role approves. */
  readonly approves: DtoClass;
  /** Who may answer its pauses. Required: a forgotten value must not let a customer approve their own refund. */
  readonly answeredBy: PauseAnswerer;
  /** A `@ReplyInterpreter` that reads free-text answers; one interpreter belongs to one role. */
  readonly replyInterpreter?: AnyClass;
}

/** Declares a channel role: a contract that tools name and a `@Channel` implements. */
export function ChannelRole(options: ChannelRoleOptions) {
  return componentDecorator(ComponentKind.ChannelRole, options);
}

/** What `@Channel` declares. */
export interface ChannelOptions {
  /** Ends with `-channel`. */
  readonly name: string;
  readonly description: string;
  readonly deps?: readonly unknown[];
}

/**
 * Declares a channel implementation: a role's (registered in `@Application({ providers })`), or a
 * concrete channel a tool names as is (answered by the thread's owner).
 */
export function Channel(options: ChannelOptions) {
  return componentDecorator(ComponentKind.Channel, options);
}
