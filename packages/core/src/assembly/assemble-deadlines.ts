import type { ChannelRoleOptions } from "../channels/channel-decorators.js";
import type { ExpiryOutcome, PauseDeadlines } from "../channels/pause-deadlines.js";
import { ComponentKind } from "../container/component-kind.js";
import { type AnyClass, componentOfKind, describeClass } from "../container/component-registry.js";
import type { DtoClass } from "../dto/dto.js";
import { type Duration, toMilliseconds } from "../time/duration.js";
import { assembleChannel, type ChannelUse } from "./assemble-channels.js";
import type { AssembledChannel, AssembledDeadlines } from "./assembled-application.js";
import type { AssemblyContext } from "./assembly-context.js";

/** The deadlines a role declares, or undefined for a concrete channel or a role without them. */
export function declaredDeadlines(cls: AnyClass): PauseDeadlines | undefined {
  return componentOfKind<ChannelRoleOptions>(cls, ComponentKind.ChannelRole)?.options.deadlines;
}

/**
 * Checks the deadlines of a tool's channel (the role's, with the tool's overrides) and resolves them,
 * with every role they escalate to and that role's own deadlines. Undefined when there are none.
 */
export function assembleDeadlines(
  ctx: AssemblyContext,
  args: {
    readonly use: ChannelUse;
    readonly channel: AssembledChannel;
    readonly declared: PauseDeadlines | undefined;
    /** The roles asked before this one in the escalation chain, this one last. */
    readonly chain: readonly AnyClass[];
    /** The expiry of the role that escalated to this one, carried over when this one declares none. */
    readonly carried?: AssembledDeadlines["expire"];
  },
): AssembledDeadlines | undefined {
  const { use, channel, declared, chain, carried } = args;
  if (declared === undefined)
    return carried === undefined ? undefined : { expire: { ...carried, carried: true } };
  const where = `the deadlines of ${describeClass(chain.length === 1 ? use.tool : channel.cls)}`;
  const remindEveryMs = duration(ctx, declared.remindEvery, `${where}: remindEvery`);
  const expire = declared.expire;
  const expireAfterMs = duration(ctx, expire?.after, `${where}: expire.after`);
  const escalateAfterMs = duration(ctx, declared.escalate?.after, `${where}: escalate.after`);
  if (expire !== undefined) checkOutcome(ctx, channel, expire.outcome, where);
  const own =
    expire === undefined || expireAfterMs === undefined
      ? undefined
      : { afterMs: expireAfterMs, outcome: expire.outcome };
  const expiry = own ?? (carried === undefined ? undefined : { ...carried, carried: true });
  const to =
    declared.escalate === undefined || escalateAfterMs === undefined
      ? undefined
      : escalationTarget(ctx, { use, channel, to: declared.escalate.to, chain, where, carried: expiry });
  return {
    ...(remindEveryMs === undefined ? {} : { remindEveryMs }),
    ...(to === undefined || escalateAfterMs === undefined
      ? {}
      : { escalate: { afterMs: escalateAfterMs, to } }),
    ...(expiry === undefined ? {} : { expire: expiry }),
  };
}

/** A duration in milliseconds, or undefined (with a violation when it is given but not a positive duration). */
function duration(ctx: AssemblyContext, value: Duration | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = typeof value === "object" && value !== null ? toMilliseconds(value) : Number.NaN;
  if (!Number.isFinite(ms) || ms <= 0) {
    ctx.add(
      "channel.deadline-duration",
      `${what} must be a positive duration (seconds(…), hours(…), days(…)).`,
    );
    return undefined;
  }
  return ms;
}

/** The expiry's outcome must be one the role can give: a decision for an approval, an answer for a question. */
function checkOutcome(
  ctx: AssemblyContext,
  channel: AssembledChannel,
  outcome: ExpiryOutcome,
  where: string,
): void {
  const kind = (outcome as { kind?: unknown } | undefined)?.kind;
  const question = channel.answer !== undefined;
  if (kind === "fail") return;
  if (kind === "reject" || kind === "approve") {
    if (question) {
      ctx.add(
        "channel.expiry-outcome",
        `${where}: expire.outcome is ExpiryOutcome.${kind}(…), but ${channel.name} asks a question (its answer is a ${channel.answer?.name}); use ExpiryOutcome.answer(…) or ExpiryOutcome.fail(…).`,
      );
    }
    return;
  }
  if (kind === "answer") {
    if (!question) {
      ctx.add(
        "channel.expiry-outcome",
        `${where}: expire.outcome is ExpiryOutcome.answer(…), but ${channel.name} approves calls; use ExpiryOutcome.reject(…), approve() or fail(…).`,
      );
      return;
    }
    const dto = channel.answer as DtoClass;
    const parsed = dto.schema.safeParse((outcome as { answer: unknown }).answer);
    if (!parsed.success) {
      ctx.add(
        "channel.expiry-outcome",
        `${where}: ExpiryOutcome.answer(…) is not a valid ${dto.name}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}.`,
      );
    }
    return;
  }
  ctx.add(
    "channel.expiry-outcome",
    `${where}: expire.outcome must be built with ExpiryOutcome.reject(…), approve(), answer(…) or fail(…).`,
  );
}

/**
 * The role a deadline escalates to, assembled for the same tool with its own deadlines: it must be a
 * `@ChannelRole` that answers the tool's calls the way the first role does, and no role may come twice.
 */
function escalationTarget(
  ctx: AssemblyContext,
  args: {
    readonly use: ChannelUse;
    readonly channel: AssembledChannel;
    readonly to: AnyClass;
    readonly chain: readonly AnyClass[];
    readonly where: string;
    readonly carried: AssembledDeadlines["expire"];
  },
): AssembledChannel | undefined {
  const { use, channel, to, chain, where, carried } = args;
  const role = componentOfKind<ChannelRoleOptions>(to, ComponentKind.ChannelRole);
  if (role === undefined) {
    ctx.add(
      "channel.escalation-not-a-role",
      `${where}: escalate.to is ${describeClass(to)}, which has no @ChannelRole; escalate to a role whose implementation is registered in @Application({ providers }).`,
    );
    return undefined;
  }
  if (chain.includes(to)) {
    ctx.add(
      "channel.escalation-cycle",
      `${where}: escalating to ${describeClass(to)} comes back to a role already asked (${[...chain, to].map((c) => c.name).join(" → ")}); an escalation chain must end.`,
    );
    return undefined;
  }
  const { approves, ask, answer } = role.options as {
    approves?: DtoClass;
    ask?: DtoClass;
    answer?: DtoClass;
  };
  const input = use.toolOptions.input;
  const problem =
    channel.answer === undefined
      ? approves !== input
        ? `${describeClass(to)} ${approves === undefined ? "asks a question" : `approves ${approves.name}`}, but ${channel.name} approves the tool's ${input.name}; escalate to a role that approves ${input.name}.`
        : undefined
      : ask !== input || answer !== channel.answer
        ? `${describeClass(to)} ${approves !== undefined ? `approves ${approves.name}` : `asks about ${ask?.name ?? "nothing"} for a ${answer?.name ?? "nothing"}`}, but ${channel.name} asks about ${input.name} for a ${channel.answer.name}; escalate to a question role with the same ask and answer.`
        : undefined;
  if (problem !== undefined) {
    ctx.add(
      "channel.escalation-mismatch",
      `${where}: escalate.to cannot answer this tool's calls: ${problem}`,
    );
    return undefined;
  }
  const target = assembleChannel(ctx, { ...use, cls: to });
  if (target === undefined) return undefined;
  const deadlines = assembleDeadlines(ctx, {
    use,
    channel: target,
    declared: role.options.deadlines,
    chain: [...chain, to],
    carried,
  });
  return deadlines === undefined ? target : { ...target, deadlines };
}
