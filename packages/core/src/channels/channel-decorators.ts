import { ComponentKind } from "../container/component-kind.js";
import { type AnyClass, componentDecorator } from "../container/component-registry.js";
import type { DtoClass } from "../dto/dto.js";
import type { PauseAnswerer } from "../pauses/pause-status.js";
import type { ToolCallApprovalDecisionDto } from "./approval-dtos.js";
import type { PauseDeadlines } from "./pause-deadlines.js";

/** What every `@ChannelRole` declares, whichever kind it is. */
interface ChannelRoleBase {
  /** Ends with `-channel`. */
  readonly name: string;
  readonly description: string;
  /** Who may answer its pauses. Required: a forgotten value must not let a customer approve their own refund. */
  readonly answeredBy: PauseAnswerer;
  /** A `@ReplyInterpreter` that reads free-text answers; one interpreter belongs to one role. */
  readonly replyInterpreter?: AnyClass;
  /** Reminders, an escalation and an expiry for its questions nobody answers ([deadlines](../../docs/deadlines.md)). */
  readonly deadlines?: PauseDeadlines;
}

/**
 * An approval role: a person approves or rejects each call of a tool whose input is `approves`, and
 * answers with a `ToolCallApprovalDecisionDto`.
 */
export interface ApprovalRoleOptions<TAskDto extends DtoClass = DtoClass> extends ChannelRoleBase {
  /** The tool input this role approves. */
  readonly approves: TAskDto;
  readonly ask?: never;
  readonly answer?: never;
}

/**
 * A question role: a person is asked about each call of a tool whose input is `ask`, and answers with
 * a value of `answer`, which the tool's `run(input, answer)` receives. For what a yes or a no cannot
 * say: an amount, a date, a choice among options.
 */
export interface QuestionRoleOptions<
  TAskDto extends DtoClass = DtoClass,
  TAnswerDto extends DtoClass = DtoClass,
> extends ChannelRoleBase {
  /** The tool input the person is asked about. */
  readonly ask: TAskDto;
  /** What the person answers: the DTO `app.resume({ answer })`, a channel and an interpreter give. */
  readonly answer: TAnswerDto;
  readonly approves?: never;
}

/** What `@ChannelRole` declares: an approval role (`approves`) or a question role (`ask` + `answer`). */
export type ChannelRoleOptions<TAskDto extends DtoClass = DtoClass, TAnswerDto extends DtoClass = DtoClass> =
  | ApprovalRoleOptions<TAskDto>
  | QuestionRoleOptions<TAskDto, TAnswerDto>;

/**
 * Declares a channel role: a contract that tools name and a `@Channel` implements. A role class that
 * extends `ChannelOf<Self, Ask, Answer>` must name `Ask` as `approves` (or `ask`) and `Answer` as
 * `answer`; other DTOs are a compile error.
 */
export function ChannelRole<
  TAskDto extends DtoClass,
  TAnswerDto extends DtoClass = typeof ToolCallApprovalDecisionDto,
>(options: ChannelRoleOptions<TAskDto, TAnswerDto>) {
  return componentDecorator(ComponentKind.ChannelRole, options) as <TClass extends AnyClass>(
    target: TClass & RoleTypesMatch<TClass, InstanceType<TAskDto>, InstanceType<TAnswerDto>>,
    context?: ClassDecoratorContext,
  ) => void;
}

/** The same types, `[A] extends [B]` both ways. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * `unknown` when the role class declares no DTOs (or `unknown`), or the ones its options name; else an
 * object type it cannot satisfy, naming what it declares.
 */
type RoleTypesMatch<TClass extends AnyClass, TAsk, TAnswer> =
  InstanceType<TClass> extends {
    readonly __agbossTypes?: infer D;
  }
    ? [NonNullable<D>] extends [{ readonly input: infer I; readonly output: infer O }]
      ? (unknown extends I ? true : Same<I, TAsk>) extends true
        ? (unknown extends O ? true : Same<O, TAnswer>) extends true
          ? unknown
          : { readonly "the role class declares another answer than @ChannelRole's answer DTO": O }
        : { readonly "the role class declares another ask than @ChannelRole's approves (or ask) DTO": I }
      : unknown
    : unknown;

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
