import { randomFillSync } from "node:crypto";
import type {
  AssembledApplication,
  AssembledChannel,
  AssembledTool,
} from "../assembly/assembled-application.js";
import type { ChannelHandler } from "../channels/channel-of.js";
import type { ChannelRef } from "../channels/channel-outcome.js";
import { DEFAULT_TOOL_TIMEOUT } from "../components/tool.js";
import { ExecutionContext, type ExecutionFrame } from "../container/execution-context.js";
import { maskWith } from "../dto/sensitive.js";
import { ChannelTimeoutError } from "../errors/runtime-errors.js";
import { LogLevel } from "../logging/logger.js";
import type { PauseAnswer, PauseRecord } from "../pauses/pause-record.js";
import {
  PauseAnswerer,
  type PauseCancellation,
  PauseKind,
  PauseResolution,
  type PauseWithdrawalResolution,
} from "../pauses/pause-status.js";
import type { PendingPause } from "../pauses/pending-pause.js";
import { maskFindings } from "../pii/pii-record-mask.js";
import { sensitiveValuesOf } from "../pii/sensitive-values.js";
import type { PauseEntry } from "../records/pause-entry.js";
import { tellFollowersWithdrawn } from "../services/followers.js";
import { piiPoliciesOf } from "../services/pii-policies.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import { pauseAttributes, spanOf, traced } from "../services/tracing.js";
import type { Fence } from "../store/fence.js";
import { toMilliseconds } from "../time/duration.js";

const PAUSE_ID_BYTES = 16;
/** Random bytes for pause ids, drawn from the system's generator 256 ids at a time (one system call). */
let idBytes = Buffer.alloc(0);
let idBytesUsed = 0;

/** A fresh pause id: 128 random bits, URL-safe. @internal */
export function newPauseId(): string {
  if (idBytesUsed + PAUSE_ID_BYTES > idBytes.length) {
    idBytes = randomFillSync(Buffer.allocUnsafe(256 * PAUSE_ID_BYTES));
    idBytesUsed = 0;
  }
  const id = idBytes.toString("base64url", idBytesUsed, idBytesUsed + PAUSE_ID_BYTES);
  // Spent bytes are wiped, so what stays in memory is only what later ids will be.
  idBytes.fill(0, idBytesUsed, idBytesUsed + PAUSE_ID_BYTES);
  idBytesUsed += PAUSE_ID_BYTES;
  return id;
}

/**
 * The tool a pause's question is about, as its pause sees it: for a pause asked of a role its tool's
 * deadlines escalated to, the tool with that role as its channel and that role's deadlines.
 * @internal
 */
export function toolOfPause(assembled: AssembledApplication, pause: PauseRecord): AssembledTool | undefined {
  const ask = pause.ask;
  for (const agent of assembled.agents.values()) {
    if (agent.name !== pause.agent) continue;
    const tool = agent.tools.get(ask.tool);
    return tool === undefined ? undefined : (escalationLevelOf(tool, pause.channel) ?? tool);
  }
  return undefined;
}

/**
 * The tool as asked of `channel` along its escalation chain: its channel and deadlines replaced by that
 * role's; the tool itself for its own channel; undefined when no role of the chain has that name.
 * @internal
 */
export function escalationLevelOf(tool: AssembledTool, channel: string): AssembledTool | undefined {
  if (tool.channel === undefined || tool.channel.name === channel) return tool;
  for (let to = tool.deadlines?.escalate?.to; to !== undefined; to = to.deadlines?.escalate?.to) {
    if (to.name === channel) return { ...tool, channel: to, deadlines: to.deadlines };
  }
  return undefined;
}

/** What a channel's pauses ask for: a question role's answer, else a decision. @internal */
export function kindOfChannel(channel: AssembledChannel | undefined): PauseKind {
  return channel?.answer === undefined ? PauseKind.Approval : PauseKind.Question;
}

/** Whether a pause asks for a decision or for a question role's answer. @internal */
export function kindOfPause(assembled: AssembledApplication, pause: PauseRecord): PauseKind {
  return kindOfChannel(toolOfPause(assembled, pause)?.channel);
}

function maskedArgs(tool: AssembledTool | undefined, value: unknown): unknown {
  return tool === undefined ? value : maskWith(tool.options.input.schema, value);
}

/** The question with sensitive fields masked. @internal */
export function maskedAsk(assembled: AssembledApplication, pause: PauseRecord) {
  const ask = pause.ask;
  return {
    ...ask,
    arguments: maskedArgs(toolOfPause(assembled, pause), ask.arguments) as Record<string, unknown>,
  };
}

/** A waiting pause as `result.pending` lists it. @internal */
export function pendingOf(assembled: AssembledApplication, pause: PauseRecord): PendingPause {
  const step = pause.step;
  return {
    pauseId: pause.answeredBy === PauseAnswerer.ThreadOwner ? pause.pauseId : undefined,
    answeredBy: pause.answeredBy,
    kind: kindOfPause(assembled, pause),
    agent: pause.agent,
    channel: pause.channel,
    itemIndex: step.context.itemIndex,
    childExecutionId: pause.executionId === pause.rootExecutionId ? undefined : pause.executionId,
    ask: maskedAsk(assembled, pause),
  };
}

/** The audit entry of a resolved pause. @internal */
export function entryOf(assembled: AssembledApplication, pause: PauseRecord): PauseEntry {
  const step = pause.step;
  const tool = toolOfPause(assembled, pause);
  const closed =
    pause.resolution === PauseResolution.Withdrawn ||
    pause.resolution === PauseResolution.Cancelled ||
    pause.resolution === PauseResolution.Escalated;
  const decision = closed ? undefined : pause.answer?.decision;
  const shown =
    decision === undefined || decision.overrideArguments === undefined
      ? decision
      : { ...decision, overrideArguments: maskedArgs(tool, decision.overrideArguments) };
  const answerDto = tool?.channel?.answer;
  const answer = closed || pause.answer?.answer === undefined ? undefined : pause.answer.answer;
  // Beyond sensitive fields, the PII policies' findings are masked in what a person wrote (a reason, a memo).
  const policies = piiPoliciesOf(assembled, step.workflow.name);
  const found =
    policies.length === 0 || tool === undefined
      ? []
      : sensitiveValuesOf([
          { schema: tool.options.input.schema, value: pause.ask.arguments },
          ...(decision?.overrideArguments === undefined
            ? []
            : [{ schema: tool.options.input.schema, value: decision.overrideArguments }]),
          ...(answer === undefined || answerDto === undefined
            ? []
            : [{ schema: answerDto.schema, value: answer }]),
        ]);
  return {
    pauseId: pause.answeredBy === PauseAnswerer.ThreadOwner ? pause.pauseId : undefined,
    executionId: pause.executionId,
    step: step.record,
    role: pause.channel,
    kind: kindOfChannel(tool?.channel),
    answeredBy: pause.answeredBy,
    responder: pause.resolution === PauseResolution.Replied ? pause.answer?.responder : undefined,
    resolution: pause.resolution ?? PauseResolution.Cancelled,
    askedAt: new Date(pause.askedAt).toISOString(),
    resolvedAt: new Date(pause.resolvedAt ?? pause.askedAt).toISOString(),
    decision: maskFindings(shown, policies, found),
    ...(pause.resolution === PauseResolution.Withdrawn && pause.answer?.withdrawnBy !== undefined
      ? { withdrawnBy: pause.answer.withdrawnBy }
      : {}),
    ...(pause.resolution === PauseResolution.Escalated && pause.answer?.escalatedTo !== undefined
      ? { escalatedTo: pause.answer.escalatedTo }
      : {}),
    answer: maskFindings(
      answer === undefined || answerDto === undefined ? answer : maskWith(answerDto.schema, answer),
      policies,
      found,
    ),
  };
}

/** Writes a resolved pause's audit entry (once per pause; the store ignores a second write). @internal */
export async function writeAudit(services: RuntimeServices, pause: PauseRecord): Promise<void> {
  await services.store.executions.savePauseAnswer(pause.tenantId, pause.rootExecutionId, {
    tenantId: pause.tenantId,
    rootExecutionId: pause.rootExecutionId,
    idempotencyKey: pause.idempotencyKey,
    askedAt: pause.askedAt,
    answer: entryOf(services.assembled, pause),
  });
}

/**
 * Closes a pause with `close` (its change out of Pending: resolved, taken or cancelled) and writes its
 * audit entry in the same unit of work: a fault between the two would leave it closed with no entry,
 * and nothing that runs later finds it pending to write one. Returns what `close` returned. @internal
 */
export function closeWithAudit(
  services: RuntimeServices,
  close: () => Promise<PauseRecord | undefined>,
): Promise<PauseRecord | undefined> {
  return services.store.atomically(async () => {
    const closed = await close();
    if (closed !== undefined) await writeAudit(services, closed);
    return closed;
  });
}

/** The frame a pause's own code (send, withdraw, an interpreter) runs in. @internal */
export function frameOfPause(pause: PauseRecord, signal: AbortSignal): ExecutionFrame {
  const step = pause.step;
  return {
    tenant: step.tenant,
    ownerId: pause.ownerId,
    threadId: pause.threadId,
    executionId: pause.executionId,
    rootExecutionId: pause.rootExecutionId,
    workflow: step.workflow,
    env: step.env,
    step: step.context,
    signal,
  };
}

/**
 * Tells a pause's channel that its question is withdrawn: in the pause's execution frame, under its
 * tool's timeout on the Clock. Best effort: a failure is one warning and nothing else.
 * @internal
 */
export async function tellWithdrawn(
  services: RuntimeServices,
  pause: PauseRecord,
  resolution: PauseWithdrawalResolution,
): Promise<void> {
  tellFollowersWithdrawn(services, pause);
  await traced(
    services.tracing,
    spanOf(ExecutionContext.current()),
    {
      name: `agboss.pause.withdraw ${pause.channel}`,
      attributes: () => ({ ...pauseAttributes(pause), "agboss.pause.resolution": resolution }),
    },
    () =>
      callChannel(services, pause, "withdraw", (kind) => ({
        pauseId: pause.pauseId,
        kind,
        value: pause.ask,
        resolution,
        ref: pause.channelRef as ChannelRef | undefined,
      })),
  );
}

/**
 * Reminds a pause's channel of its unanswered question (its `remind`, when it has one): in the pause's
 * execution frame, under its tool's timeout on the Clock. Best effort, like a withdrawal.
 * @internal
 */
export async function tellReminder(
  services: RuntimeServices,
  pause: PauseRecord,
  reminder: number,
): Promise<void> {
  await callChannel(services, pause, "remind", (kind) => ({
    pauseId: pause.pauseId,
    kind,
    value: pause.ask,
    reminder,
    askedAt: new Date(pause.askedAt).toISOString(),
    ref: pause.channelRef as ChannelRef | undefined,
  }));
}

/**
 * Calls one of a sent pause's channel methods (`withdraw`, `remind`) in the pause's execution frame,
 * under its tool's timeout; a throw or a timeout is one warning (`channel.<method>-failed`).
 */
async function callChannel(
  services: RuntimeServices,
  pause: PauseRecord,
  method: "withdraw" | "remind",
  argOf: (kind: PauseKind) => unknown,
): Promise<void> {
  const tool = toolOfPause(services.assembled, pause);
  const channel = tool?.channel;
  if (channel === undefined || !pause.isSent) return;
  const controller = new AbortController();
  const timeoutMs = toMilliseconds(tool?.options.timeout ?? DEFAULT_TOOL_TIMEOUT);
  let timer: { cancel(): void } | undefined;
  try {
    const handler = services.container.get(channel.cls) as ChannelHandler;
    const call = handler[method] as ((arg: unknown) => Promise<void>) | undefined;
    if (typeof call !== "function") return;
    const timedOut = new Promise<never>((_, reject) => {
      timer = services.clock.setTimer(timeoutMs, () => {
        const error = new ChannelTimeoutError(channel.name, method, timeoutMs);
        controller.abort(error);
        reject(error);
      });
    });
    await Promise.race([
      ExecutionContext.run(frameOfPause(pause, controller.signal), () =>
        call.call(handler, argOf(kindOfChannel(channel))),
      ),
      timedOut,
    ]);
  } catch (error) {
    services.logger.log({
      level: LogLevel.Warn,
      event: `channel.${method}-failed`,
      message: `${method} of channel "${channel.name}" failed: ${error instanceof Error ? error.message : String(error)}`,
      fields: { executionId: pause.executionId, tenantId: pause.tenantId, channel: channel.name },
      at: services.clock.now(),
    });
  } finally {
    timer?.cancel();
  }
}

/**
 * Closes every Pending pause of a tree with `resolution`, each in one commit with its audit entry, and
 * tells the channels of those this call closed. Returns the pauses it closed.
 * @internal
 */
export async function closePending(
  services: RuntimeServices,
  args: {
    readonly tenantId: string;
    readonly rootExecutionId: string;
    readonly resolution: PauseCancellation;
    /** Which pending pauses to close; all of the tree's by default. */
    readonly filter?: (pause: PauseRecord) => boolean;
    /** The lease of the pass that closes them, when a pass does. */
    readonly fence?: Fence | undefined;
    /** What to keep as each closed pause's answer (the launch that withdrew it). */
    readonly answerOf?: (pause: PauseRecord) => PauseAnswer | undefined;
    /**
     * Which pending pauses not yet marked sent to mark sent as they close, and tell their channel of
     * (with no ref). Only for pauses whose asker is gone: the caller found the tree's lease lapsed (its
     * holder stopped without letting it go: killed, or stalled past it), and that holder may have asked
     * before it stopped. Otherwise such a pause is left to the step still in its `send`, which tells the
     * channel once `send` returns, or is one whose `send` threw, whose channel is never told.
     */
    readonly tellUnsent?: ((pause: PauseRecord) => boolean) | undefined;
    /**
     * For the pending pauses not marked sent that this call does not tell of: when a withdrawal is owed
     * on each (see `PauseRecord.withdrawalOwedAt`). For a closer whose asker may be in its `send` and may
     * never come back from it (a cancel that takes a live-looking lease over): the step claims the
     * telling when its `send` returns, and the recovery sweep tells the channel at that time otherwise.
     */
    readonly withdrawalOwedAt?: number | undefined;
  },
): Promise<PauseRecord[]> {
  const { tenantId, rootExecutionId, resolution, fence, answerOf, tellUnsent, withdrawalOwedAt } = args;
  const filter = args.filter ?? (() => true);
  const { store, clock } = services;
  const waiting = await store.pauses.list({ tenantId, rootExecutionId, statuses: ["pending"] });
  const closed: PauseRecord[] = [];
  for (const pause of waiting.filter(filter)) {
    const done = await closeWithAudit(services, async () => {
      // In the close's unit of work (one commit on a SQL store): a step that comes back to its send (a
      // process that was only frozen) sees the pause marked, and leaves the telling to this call.
      const tellingNow = !pause.isSent && tellUnsent?.(pause) === true;
      if (tellingNow) await store.pauses.markSent(tenantId, pause.pauseId, fence);
      return store.pauses.cancelByTenantIdAndPauseId(
        tenantId,
        pause.pauseId,
        {
          resolution,
          at: clock.now(),
          ...(answerOf?.(pause) === undefined ? {} : { answer: answerOf(pause) }),
          ...(pause.isSent || tellingNow || withdrawalOwedAt === undefined ? {} : { withdrawalOwedAt }),
        },
        fence,
      );
    });
    if (done === undefined) continue;
    closed.push(done);
    await tellWithdrawn(services, done, resolution);
  }
  return closed;
}
