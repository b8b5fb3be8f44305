import { interrupt } from "@langchain/langgraph";
import { type PauseAnswerValue, validatePauseAnswer } from "../answering/answer-validation.js";
import {
  kindOfChannel,
  newPauseId,
  type PauseStep,
  tellWithdrawn,
  writeAudit,
} from "../answering/pause-book.js";
import type { AssembledAgent, AssembledTool } from "../assembly/assembled-application.js";
import type { ToolCallApprovalDecisionDto } from "../channels/approval-dtos.js";
import type { ChannelAskValue } from "../channels/channel-ask.js";
import type { ChannelHandler } from "../channels/channel-of.js";
import { ChannelOutcome, MAX_CHANNEL_REF_BYTES } from "../channels/channel-outcome.js";
import { ExecutionContext, type ExecutionFrame, type StepContext } from "../container/execution-context.js";
import { AgentFailedError } from "../errors/step-failed-error.js";
import type { ChatToolCall } from "../models/chat-model.js";
import type { PauseAnswer, PauseRecord, ToolResult } from "../pauses/pause-record.js";
import { PauseResolution, PauseStatus } from "../pauses/pause-status.js";
import type { BranchPath } from "../records/branch-path.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import type { Fence } from "../store/fence.js";
import type { LoopState } from "./flow-state.js";
import { BranchWithdrawnError } from "./launch-errors.js";
import { stepRecord } from "./step-record.js";

/** The channel's ref as the pause keeps it: JSON of at most {@link MAX_CHANNEL_REF_BYTES}, or an error saying why not. */
function checkedRef(ref: unknown, who: () => string): unknown {
  if (ref === undefined) return undefined;
  let text: string | undefined;
  try {
    text = JSON.stringify(ref);
  } catch {
    text = undefined;
  }
  if (text === undefined) {
    return new Error(
      `${who()} returned a ref that is not JSON; keep ids and names in it (strings, numbers, records).`,
    );
  }
  if (Buffer.byteLength(text, "utf8") > MAX_CHANNEL_REF_BYTES) {
    return new Error(
      `${who()} returned a ref of ${Buffer.byteLength(text, "utf8")} bytes; keep it under ${MAX_CHANNEL_REF_BYTES} (an id to find the question by, not the question).`,
    );
  }
  return JSON.parse(text) as unknown;
}

/** What the tool call that waited on a pause needs of it: the pause, and a result kept from an earlier run. */
interface TakenPause {
  /** The Taken pause the call goes on from; its result is kept there the moment the tool returns. */
  readonly pauseId?: string;
  /** What the tool returned in an earlier run of this step (a crash or a takeover since): use it, run nothing. */
  readonly result?: ToolResult;
}

/** How an approval or a question ended. @internal */
export type Approval =
  | ({ readonly kind: "approved"; readonly input: unknown; readonly cost?: unknown } & TakenPause)
  | ({
      readonly kind: "answered";
      readonly input: unknown;
      readonly answer: unknown;
      readonly cost?: unknown;
    } & TakenPause)
  | { readonly kind: "rejected"; readonly message: string; readonly cost?: unknown }
  | { readonly kind: "withdrawn" };

function outcomeOf(value: PauseAnswer | PauseAnswerValue | undefined, input: unknown, who: string): Approval {
  if (value !== undefined && "answer" in value && value.answer !== undefined) {
    return { kind: "answered", input, answer: value.answer };
  }
  const decision = (value as { decision?: ToolCallApprovalDecisionDto } | undefined)?.decision;
  if (decision?.approved === true) return { kind: "approved", input: decision.overrideArguments ?? input };
  return {
    kind: "rejected",
    message: `the call was rejected by ${who}${decision?.reason === undefined ? "" : `: ${decision.reason}`}`,
  };
}

function answerOf(pause: PauseRecord, input: unknown): Approval {
  if (pause.status === PauseStatus.Cancelled) return { kind: "withdrawn" };
  const who =
    pause.resolution === PauseResolution.Decided ? pause.channel : (pause.answer?.responder ?? pause.channel);
  const outcome = withPause(outcomeOf(pause.answer, input, who), pause);
  // What reading a reply cost joins the execution's spend here, when the step takes the answer.
  return pause.answer?.cost === undefined || outcome.kind === "withdrawn"
    ? outcome
    : { ...outcome, cost: pause.answer.cost };
}

/** An approval that goes on to the tool, with its pause and any result an earlier run kept there. */
function withPause(outcome: Approval, pause: PauseRecord): Approval {
  if (outcome.kind !== "approved" && outcome.kind !== "answered") return outcome;
  return {
    ...outcome,
    pauseId: pause.pauseId,
    ...(pause.toolResult === undefined ? {} : { result: pause.toolResult }),
  };
}

/**
 * Asks the tool's channel about a call and waits for the answer. The pause record is found or created
 * by the step's idempotency key, so a re-entered step (a sibling's answer, a retry after a crash) finds
 * the same pauseId and never sends twice; a still-waiting pause interrupts the task.
 * @internal
 */
export async function awaitApproval(
  services: RuntimeServices,
  args: {
    agent: AssembledAgent;
    tool: AssembledTool;
    call: ChatToolCall;
    input: unknown;
    nodeId: string;
    loop: LoopState;
    step: StepContext;
    fence: Fence | undefined;
    branch?: BranchPath | undefined;
  },
): Promise<Approval> {
  const { store, clock, container } = services;
  const { agent, tool, call, input, step, fence } = args;
  const channel = tool.channel as NonNullable<AssembledTool["channel"]>;
  const frame = ExecutionContext.current() as ExecutionFrame;
  const tenantId = frame.tenant.tenantId;
  const ask: ChannelAskValue<unknown> = {
    tool: tool.name,
    agent: agent.name,
    callId: call.id,
    arguments: input as Record<string, unknown>,
  };
  const innermost = args.branch?.launches.at(-1);
  const context: StepContext =
    innermost?.itemIndex === undefined ? step : { ...step, itemIndex: innermost.itemIndex };
  const pauseStep: PauseStep = {
    record: stepRecord(agent, args.nodeId, args.loop, call, args.branch),
    context,
    ...(args.branch === undefined ? {} : { branch: args.branch }),
    tenant: frame.tenant,
    workflow: frame.workflow,
    env: frame.env,
  };
  // A re-entered step (the usual case on a resume) finds its record with a read; only a first visit writes.
  let pause =
    (await store.pauses.findByTenantIdAndIdempotencyKey(tenantId, step.idempotencyKey as string)) ??
    (await store.pauses.findOrCreate(
      {
        tenantId,
        pauseId: newPauseId(),
        idempotencyKey: step.idempotencyKey as string,
        threadId: frame.threadId,
        rootExecutionId: frame.rootExecutionId,
        executionId: frame.executionId,
        ownerId: frame.ownerId,
        status: PauseStatus.Pending,
        resolution: undefined,
        isSent: false,
        channel: channel.name,
        answeredBy: channel.answeredBy,
        agent: agent.name,
        ask,
        step: pauseStep,
        answer: undefined,
        askedAt: clock.now(),
        resolvedAt: undefined,
      },
      fence,
    ));
  if (pause.status === PauseStatus.Pending && !pause.isSent) {
    const handler = container.get(channel.cls) as ChannelHandler;
    let outcome: unknown;
    try {
      outcome = await ExecutionContext.run({ ...frame, step }, () =>
        handler.send({
          pauseId: pause.pauseId,
          kind: kindOfChannel(channel),
          value: ask,
        }),
      );
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new AgentFailedError(
        agent.name,
        args.nodeId,
        `channel "${channel.name}" failed to ask about ${tool.name}: ${reason}`,
        { cause: error },
      );
    }
    if (!ChannelOutcome.is(outcome)) {
      throw new AgentFailedError(
        agent.name,
        args.nodeId,
        `channel "${channel.name}" returned something other than ChannelOutcome.awaitReply() or ${
          channel.answer === undefined ? "ChannelOutcome.decided(…)" : "ChannelOutcome.answered(…)"
        }.`,
      );
    }
    if (outcome.kind !== "await-reply") {
      const question = channel.answer !== undefined;
      if (question !== (outcome.kind === "answered")) {
        throw new AgentFailedError(
          agent.name,
          args.nodeId,
          question
            ? `channel "${channel.name}" asks a question (its answer is a ${channel.answer?.name}): answer at once with ChannelOutcome.answered(…), not decided(…).`
            : `channel "${channel.name}" approves calls: decide at once with ChannelOutcome.decided(…), not answered(…).`,
        );
      }
      let value: PauseAnswerValue;
      try {
        value = validatePauseAnswer(tool, outcome.kind === "answered" ? outcome.answer : outcome.decision);
      } catch (error) {
        throw new AgentFailedError(
          agent.name,
          args.nodeId,
          `channel "${channel.name}" ${question ? "answered with an invalid answer" : "decided with an invalid decision"}.`,
          { cause: error },
        );
      }
      const taken = await store.pauses.take(
        tenantId,
        pause.pauseId,
        { at: clock.now(), answer: value, resolution: PauseResolution.Decided },
        fence,
      );
      if (taken !== undefined) {
        await writeAudit(services, taken);
        return withPause(outcomeOf(value, input, channel.name), taken);
      }
    } else {
      const ref = checkedRef(outcome.ref, () => `channel "${channel.name}"`);
      if (ref instanceof Error) throw new AgentFailedError(agent.name, args.nodeId, ref.message);
      const sent = await store.pauses.markSent(tenantId, pause.pauseId, fence, ref);
      if (sent === undefined) {
        const now = (await store.pauses.findByTenantIdAndPauseId(tenantId, pause.pauseId)) as PauseRecord;
        // Closed while send was still returning: this step tells the channel, now that it can.
        if (now.status === PauseStatus.Cancelled)
          await tellWithdrawn(
            services,
            { ...now, isSent: true },
            now.resolution as "withdrawn" | "cancelled",
          );
      }
    }
    pause = (await store.pauses.findByTenantIdAndPauseId(tenantId, pause.pauseId)) as PauseRecord;
  }
  if (pause.status === PauseStatus.Pending) {
    interrupt({ pauseId: pause.pauseId });
    pause = (await store.pauses.findByTenantIdAndPauseId(tenantId, pause.pauseId)) as PauseRecord;
  }
  if (pause.status === PauseStatus.Resolved) {
    const taken = await store.pauses.take(tenantId, pause.pauseId, { at: clock.now() }, fence);
    pause = taken ?? ((await store.pauses.findByTenantIdAndPauseId(tenantId, pause.pauseId)) as PauseRecord);
  }
  if (pause.status === PauseStatus.Pending || pause.status === PauseStatus.Resolved) {
    throw new AgentFailedError(
      agent.name,
      args.nodeId,
      `pause ${pause.pauseId} was resumed but holds no answer.`,
    );
  }
  if (pause.status === PauseStatus.Cancelled && pause.resolution === PauseResolution.Withdrawn) {
    // The launch no longer needs this branch: stop it, so its join can go on.
    throw new BranchWithdrawnError(pause.pauseId, pause.answer?.withdrawnBy);
  }
  return answerOf(pause, input);
}
