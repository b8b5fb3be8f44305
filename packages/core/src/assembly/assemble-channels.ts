import type { ChannelOptions, ChannelRoleOptions } from "../channels/channel-decorators.js";
import type { ToolOptions } from "../components/tool.js";
import { ComponentKind } from "../container/component-kind.js";
import { type AnyClass, componentOfKind, describeClass } from "../container/component-registry.js";
import { type DtoClass, isDtoClass } from "../dto/dto.js";
import { PauseAnswerer } from "../pauses/pause-status.js";
import { checkInterpreter } from "./assemble-interpreters.js";
import type { AssembledChannel } from "./assembled-application.js";
import type { AssemblyContext } from "./assembly-context.js";

/** The channel a tool names, as {@link assembleChannel} reads it. */
export interface ChannelUse {
  /** The class the tool names: a role, or a concrete channel. */
  readonly cls: AnyClass;
  /** The tool that names it. */
  readonly tool: AnyClass;
  readonly toolOptions: ToolOptions;
  /** How assembly reached the channel, for the container's messages. */
  readonly chain: readonly unknown[];
}

/**
 * Checks the channel a tool names and resolves it: a role (who answers, what it approves or asks, its
 * reply interpreter) or a concrete channel (its dependencies). Undefined when the class is neither.
 */
export function assembleChannel(ctx: AssemblyContext, use: ChannelUse): AssembledChannel | undefined {
  const { cls, tool, chain } = use;
  const role = componentOfKind<ChannelRoleOptions>(cls, ComponentKind.ChannelRole);
  const concrete = componentOfKind<ChannelOptions>(cls, ComponentKind.Channel);
  if (role === undefined && concrete === undefined) {
    ctx.add(
      "tool.channel-not-a-channel",
      `${describeClass(tool)} names channel ${describeClass(cls)}, which has neither @ChannelRole nor @Channel.`,
    );
    return undefined;
  }
  ctx.checkName(cls);
  if (role !== undefined) return assembleRole(ctx, use, role.options);
  ctx.checkDeps(cls, chain);
  return {
    cls,
    name: (concrete as NonNullable<typeof concrete>).options.name,
    answeredBy: PauseAnswerer.ThreadOwner,
    replyInterpreter: undefined,
    answer: undefined,
  };
}

/** Checks a channel role (who answers, its kind, its providers, its interpreter) and resolves it. */
function assembleRole(ctx: AssemblyContext, use: ChannelUse, options: ChannelRoleOptions): AssembledChannel {
  const { cls, chain } = use;
  const answeredBy = options.answeredBy as string | undefined;
  if (answeredBy !== PauseAnswerer.ThreadOwner && answeredBy !== PauseAnswerer.Channel) {
    ctx.add(
      "channel.no-answerer",
      `${describeClass(cls)} must say who may answer: @ChannelRole({ answeredBy: PauseAnswerer.ThreadOwner | PauseAnswerer.Channel }). There is no default.`,
    );
  }
  const { approves, ask, answer } = options as {
    approves?: DtoClass;
    ask?: DtoClass;
    answer?: DtoClass;
  };
  const question = ask !== undefined || answer !== undefined;
  checkRoleKind(ctx, use, { approves, ask, answer });
  ctx.checkProviders(cls, chain);
  const interpreter = options.replyInterpreter;
  if (interpreter !== undefined) {
    checkInterpreter(ctx, { interpreter, role: cls, answer: question ? answer : undefined, chain });
  }
  return {
    cls,
    name: options.name,
    answeredBy: options.answeredBy,
    replyInterpreter: options.replyInterpreter,
    answer: question && approves === undefined ? answer : undefined,
  };
}

/**
 * Checks what kind of role it is: an approval role approves the tool's input; a question role declares
 * both ask (the tool's input) and answer, as DTOs; no role is both.
 */
function checkRoleKind(
  ctx: AssemblyContext,
  use: ChannelUse,
  declared: { approves?: DtoClass | undefined; ask?: DtoClass | undefined; answer?: DtoClass | undefined },
): void {
  const { cls, tool, toolOptions } = use;
  const { approves, ask, answer } = declared;
  const question = ask !== undefined || answer !== undefined;
  if (approves !== undefined && question) {
    ctx.add(
      "channel.role-kind",
      `${describeClass(cls)} declares both approves and ask / answer; a role either approves calls (approves) or asks a question (ask + answer), not both.`,
    );
  } else if (question) {
    if (ask === undefined || answer === undefined) {
      ctx.add(
        "channel.role-kind",
        `${describeClass(cls)} is a question role but declares only ${ask === undefined ? "answer" : "ask"}; a question role needs both ask (the tool input it asks about) and answer (the DTO a person answers with).`,
      );
    }
    for (const [field, value] of [
      ["ask", ask],
      ["answer", answer],
    ] as const) {
      if (value !== undefined && !isDtoClass(value)) {
        ctx.add(
          "dto.not-a-dto",
          `${describeClass(cls)}'s ${field} must be a DTO class built with Dto({ … }).`,
        );
      }
    }
    if (ask !== undefined && ask !== toolOptions.input) {
      ctx.add(
        "channel.ask-mismatch",
        `${describeClass(tool)} takes ${toolOptions.input.name} but its channel ${describeClass(cls)} asks about ${ask.name}; name a question role whose ask is the tool's input.`,
      );
    }
  } else if (approves !== toolOptions.input) {
    ctx.add(
      "channel.approves-mismatch",
      `${describeClass(tool)} takes ${toolOptions.input.name} but its channel ${describeClass(cls)} approves ${approves?.name ?? "nothing"}; name a role that approves the tool's input${approves === undefined ? " (or declare ask and answer for a question role)" : ""}.`,
    );
  }
}
