import {
  type AnyClass,
  ComponentKind,
  componentOf,
  type DtoClass,
  PauseAnswerer,
  PauseKind,
} from "@agboss/core";
import { TERMINAL_USER_CHANNEL } from "./terminal-user-channel-name.js";

/** A channel whose pauses the terminal lists, as read from its declaration. @internal */
export interface AnsweredChannel {
  /** The name its pauses are listed under: the role's, or the concrete channel's. */
  readonly name: string;
  readonly description: string;
  /** What its pauses ask for. */
  readonly kind: PauseKind;
  /** A question role's answer DTO. */
  readonly answer: DtoClass | undefined;
  /** True when the role has a reply interpreter, so a free-text reply can answer. */
  readonly readsReplies: boolean;
}

interface RoleDeclaration {
  readonly name?: unknown;
  readonly description?: unknown;
  readonly answeredBy?: unknown;
  readonly answer?: DtoClass;
  readonly replyInterpreter?: unknown;
}

/** TerminalUserChannel, always listed. @internal */
export const TERMINAL_USER: AnsweredChannel = {
  name: TERMINAL_USER_CHANNEL,
  description: "Asks the thread's owner in the terminal",
  kind: PauseKind.Approval,
  answer: undefined,
  readsReplies: false,
};

/**
 * What a class given in `roles` stands for: a `@ChannelRole` (or a `@Channel` implementing one, read
 * as its role), or a concrete `@Channel`. Refuses a role its thread's owner cannot answer.
 * @internal
 */
export function answeredChannel(cls: AnyClass): AnsweredChannel {
  const given = componentOf<RoleDeclaration>(cls);
  for (
    let c: unknown = cls;
    typeof c === "function" && c !== Function.prototype;
    c = Object.getPrototypeOf(c)
  ) {
    const meta = componentOf<RoleDeclaration>(c);
    if (meta?.kind !== ComponentKind.ChannelRole) continue;
    const { name, description, answeredBy, answer, replyInterpreter } = meta.options;
    if (answeredBy !== PauseAnswerer.ThreadOwner) {
      throw new TypeError(
        `${String(name)} is answered by ${String(answeredBy)}, not by the thread's owner: its pause ids stay with its channel, so it cannot be answered in the terminal. Declare it with answeredBy: PauseAnswerer.ThreadOwner.`,
      );
    }
    return {
      name: String(name),
      description: String(description ?? ""),
      kind: answer === undefined ? PauseKind.Approval : PauseKind.Question,
      answer,
      readsReplies: replyInterpreter !== undefined,
    };
  }
  if (given?.kind === ComponentKind.Channel) {
    // A concrete channel a tool names as is: approvals, answered by the thread's owner.
    return {
      name: String(given.options.name),
      description: String(given.options.description ?? ""),
      kind: PauseKind.Approval,
      answer: undefined,
      readsReplies: false,
    };
  }
  throw new TypeError(`${cls.name || "(anonymous class)"} is neither a @ChannelRole nor a @Channel.`);
}

/** The channels a session lists: TerminalUserChannel's and those of `roles`, by name. @internal */
export function answeredChannels(roles: readonly AnyClass[] = []): Map<string, AnsweredChannel> {
  const channels = new Map<string, AnsweredChannel>([[TERMINAL_USER.name, TERMINAL_USER]]);
  for (const role of roles) {
    const channel = answeredChannel(role);
    channels.set(channel.name, channel);
  }
  return channels;
}
