import { ComponentKind } from "../container/component-kind.js";
import { type AnyClass, componentDecorator } from "../container/component-registry.js";
import type { DtoClass } from "../dto/dto.js";
import type { PauseAnswerer } from "../pauses/pause-status.js";

/** What every `@ChannelRole` declares, whichever kind it is. */
interface ChannelRoleBase {
  /** Ends with `-channel`. */
  readonly name: string;
  readonly description: string;
  /** Who may answer its pauses. Required: a forgotten value must not let a customer approve their own refund. */
  readonly answeredBy: PauseAnswerer;
  /** A `@ReplyInterpreter` that reads free-text answers; one interpreter belongs to one role. */
  readonly replyInterpreter?: AnyClass;
}

/**
 * An approval role: a person approves or rejects each call of a tool whose input is `approves`, and
 * answers with a `ToolCallApprovalDecisionDto`.
 */
export interface ApprovalRoleOptions extends ChannelRoleBase {
  /** The tool input this role approves. */
  readonly approves: DtoClass;
  readonly ask?: never;
  readonly answer?: never;
}

/**
 * A question role: a person is asked about each call of a tool whose input is `ask`, and answers with
 * a value of `answer`, which the tool's `run(input, answer)` receives. For what a yes or a no cannot
 * say: an amount, a date, a choice among options.
 */
export interface QuestionRoleOptions extends ChannelRoleBase {
  /** The tool input the person is asked about. */
  readonly ask: DtoClass;
  /** What the person answers: the DTO `app.resume({ answer })`, a channel and an interpreter give. */
  readonly answer: DtoClass;
  readonly approves?: never;
}

/** What `@ChannelRole` declares: an approval role (`approves`) or a question role (`ask` + `answer`). */
export type ChannelRoleOptions = ApprovalRoleOptions | QuestionRoleOptions;

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
