import { interrupt } from "@langchain/langgraph";
import { type PauseAnswerValue, validatePauseAnswer } from "../answering/answer-validation.js";
import { closeWithAudit, kindOfChannel, newPauseId, tellWithdrawn } from "../answering/pause-book.js";
import { firstDeadline } from "../answering/pause-deadlines.js";
import type {
  AssembledAgent,
  AssembledChannel,
  AssembledDeadlines,
  AssembledTool,
} from "../assembly/assembled-application.js";
import type { ToolCallApprovalDecisionDto } from "../channels/approval-dtos.js";
import type { ChannelAskValue } from "../channels/channel-ask.js";
import type { ChannelHandler } from "../channels/channel-of.js";
import { ChannelOutcome, MAX_CHANNEL_REF_BYTES } from "../channels/channel-outcome.js";
import { ExecutionContext, type ExecutionFrame, type StepContext } from "../container/execution-context.js";
import { AgentFailedError } from "../errors/step-failed-error.js";
import type { ChatToolCall } from "../models/chat-model.js";
import { PauseExpiredError } from "../pauses/pause-errors.js";
import type { PauseAnswer, PauseRecord, ToolResult } from "../pauses/pause-record.js";
import { PauseAnswerer, PauseResolution, PauseStatus } from "../pauses/pause-status.js";
import type { PauseStep } from "../pauses/pause-step.js";
import type { BranchPath } from "../records/branch-path.js";
import { tellProgress } from "../services/progress.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import { frameAttributes, pauseAttributes, spanOf, traced } from "../services/tracing.js";
import { confirmLeaseUnchanged, LEASE_TTL_MS } from "../services/tree-lease.js";
import { type Fence, LeaseLostError } from "../store/fence.js";
import type { LoopState } from "./flow-state.js";
import { BranchWithdrawnError } from "./launch-errors.js";
import { stepRecord } from "./step-record.js";

/**
 * The channel's ref as the pause keeps it: JSON of at most {@link MAX_CHANNEL_REF_BYTES}; anything else
 * fails the step (an `AgentFailedError` saying why) through `refuse`.
 */
function checkedRef(ref: unknown, who: () => string, refuse: (why: string) => never): unknown {
  if (ref === undefined) return undefined;
  let text: string | undefined;
  try {
    text = JSON.stringify(ref);
  } catch {
    text = undefined;
  }
  if (text === undefined) {
    return refuse(
      `${who()} returned a ref that is not JSON; keep ids and names in it (strings, numbers, records).`,
    );
  }
  if (Buffer.byteLength(text, "utf8") > MAX_CHANNEL_REF_BYTES) {
    return refuse(
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
  /**
   * True when this very step took the pause, fenced, with nothing awaited since: the take proved the
   * lease current, so the tool may start without confirming it again.
   */
  readonly takenNow?: boolean;
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

function answerOf(pause: PauseRecord, input: unknown, takenNow: boolean): Approval {
  if (pause.status === PauseStatus.Cancelled) return { kind: "withdrawn" };
  const who =
    pause.resolution === PauseResolution.Decided ? pause.channel : (pause.answer?.responder ?? pause.channel);
  const outcome = withPause(outcomeOf(pause.answer, input, who), pause, takenNow);
  // What reading a reply cost joins the execution's spend here, when the step takes the answer.
  return pause.answer?.cost === undefined || outcome.kind === "withdrawn"
    ? outcome
    : { ...outcome, cost: pause.answer.cost };
}

/** An approval that goes on to the tool, with its pause and any result an earlier run kept there. */
function withPause(outcome: Approval, pause: PauseRecord, takenNow = false): Approval {
  if (outcome.kind !== "approved" && outcome.kind !== "answered") return outcome;
  return {
    ...outcome,
    pauseId: pause.pauseId,
    ...(takenNow ? { takenNow } : {}),
    ...(pause.toolResult === undefined ? {} : { result: pause.toolResult }),
  };
}

/** The tool call {@link awaitApproval} asks about, and where it runs. @internal */
export interface ApprovalRequest {
  agent: AssembledAgent;
  tool: AssembledTool;
  call: ChatToolCall;
  input: unknown;
  nodeId: string;
  loop: LoopState;
  step: StepContext;
  fence: Fence | undefined;
  branch?: BranchPath | undefined;
  /** The call's position among its model turn's calls: the audit trail's order within one turn. */
  callIndex?: number | undefined;
}

/** One call's asking, as the steps of {@link awaitApproval} share it. */
interface Asking {
  readonly services: RuntimeServices;
  readonly request: ApprovalRequest;
  /** The channel asked: the tool's, or a role its deadlines escalated to. */
  readonly channel: AssembledChannel;
  /** The deadlines of this channel's pause. */
  readonly deadlines: AssembledDeadlines | undefined;
  /** How many escalations came before this asking: 0 for the tool's own channel. */
  readonly level: number;
  /** The pause this asking's role was escalated from; undefined for the tool's own channel. */
  readonly escalatedFrom?: PauseRecord | undefined;
  /** The execution frame the step runs in. */
  readonly frame: ExecutionFrame;
  readonly tenantId: string;
  /** What the channel is asked: the call, as the pause keeps it. */
  readonly ask: ChannelAskValue<unknown>;
}

/**
 * Asks the tool's channel about a call and waits for the answer. The pause record is found or created
 * by the step's idempotency key, so a re-entered step (a sibling's answer, a retry after a crash) finds
 * the same pauseId. A pause marked sent is never sent again; one whose process died after `send` but
 * before the mark is sent again on recovery, with the same pauseId (at least once, keyed by pause).
 * A still-waiting pause interrupts the task.
 * @internal
 */
export async function awaitApproval(services: RuntimeServices, args: ApprovalRequest): Promise<Approval> {
  const frame = ExecutionContext.current() as ExecutionFrame;
  let asking: Asking = {
    services,
    request: args,
    channel: args.tool.channel as NonNullable<AssembledTool["channel"]>,
    deadlines: args.tool.deadlines,
    level: 0,
    frame,
    tenantId: frame.tenant.tenantId,
    ask: {
      tool: args.tool.name,
      agent: args.agent.name,
      callId: args.call.id,
      arguments: args.input as Record<string, unknown>,
    },
  };
  for (;;) {
    // The pause as the call that moves this pass stored it just before, if it answered this one.
    const answered = answeredNow(frame, asking.tenantId, keyOf(asking));
    const found = answered ?? (await findOrCreatePause(asking));
    if ("removed" in found) {
      // This level's pause was escalated and then removed by retention while the step waited further
      // on: its interrupt is passed, and the step goes on with the next level's pause.
      interrupt({ pauseId: found.next.pauseId });
      asking = found.removed;
      continue;
    }
    let pause = found;
    if (pause.status === PauseStatus.Pending && !pause.isSent) {
      const sent = await sendOnce(asking, pause);
      tellPause(asking, pause, "asked");
      if ("approval" in sent) return told(asking, pause, sent.approval);
      pause = sent.pause;
    }
    const waited =
      pause.resolution === PauseResolution.Escalated
        ? await passEscalated(asking, pause)
        : pause === answered && pause.status === PauseStatus.Taken
          ? await takenForThisPass(asking, pause)
          : await waitAndTake(asking, pause);
    if (waited.pause.resolution !== PauseResolution.Escalated) {
      try {
        return told(asking, waited.pause, approvalOf(asking, waited.pause, waited.takenNow));
      } catch (error) {
        if (error instanceof BranchWithdrawnError) tellPause(asking, waited.pause, "withdrawn");
        throw error;
      }
    }
    asking = escalated(asking, waited.pause);
  }
}

/** Tells a streamed run's listener about a step's pause; a channel's pause is named without its id. */
function tellPause(
  asking: Asking,
  pause: PauseRecord,
  what: "asked" | "withdrawn" | "approved" | "answered" | "rejected",
): void {
  const { request } = asking;
  tellProgress(
    asking.services,
    asking.frame,
    () => {
      const named = {
        pauseId: pause.answeredBy === PauseAnswerer.ThreadOwner ? pause.pauseId : undefined,
        tool: request.tool.name,
        callId: request.call.id,
        agent: request.agent.name,
      };
      if (what === "asked") return { type: "pause.asked", ...named, role: asking.channel.name };
      if (what === "withdrawn") return { type: "pause.withdrawn", ...named };
      return { type: "pause.answered", ...named, outcome: what };
    },
    pause.pauseId,
  );
}

/** Tells the listener how the step's pause was answered, and returns the approval. */
function told(asking: Asking, pause: PauseRecord, approval: Approval): Approval {
  tellPause(asking, pause, approval.kind);
  return approval;
}

/**
 * The asking of the role a pause was escalated to: its own pause, keyed by the step's idempotency key
 * and the escalation's level, so a step run again finds every level's pause where it left it.
 */
function escalated(asking: Asking, pause: PauseRecord): Asking {
  const to = asking.deadlines?.escalate?.to;
  if (to === undefined || to.name !== pause.answer?.escalatedTo) {
    throw failed(
      asking,
      `pause ${pause.pauseId} was escalated to ${pause.answer?.escalatedTo ?? "another role"}, which ${asking.channel.name}'s deadlines no longer name; the call cannot go on.`,
    );
  }
  return { ...asking, channel: to, deadlines: to.deadlines, level: asking.level + 1, escalatedFrom: pause };
}

/**
 * A pause escalated to another role: its interrupt is passed (each level of a step's escalation holds
 * one interrupt of its task, in order, so the next level's is its own), and it is taken, once.
 */
async function passEscalated(
  asking: Asking,
  pause: PauseRecord,
): Promise<{ pause: PauseRecord; takenNow: boolean }> {
  const { services, request, tenantId } = asking;
  interrupt({ pauseId: pause.pauseId });
  if (pause.status !== PauseStatus.Resolved) return { pause, takenNow: false };
  await services.store.pauses.take(tenantId, pause.pauseId, { at: services.clock.now() }, request.fence);
  return { pause, takenNow: false };
}

/** An {@link AgentFailedError} of the asking agent, at its node. */
function failed(asking: Asking, reason: string, options?: { cause?: unknown }): AgentFailedError {
  return new AgentFailedError(asking.request.agent.name, asking.request.nodeId, reason, options);
}

/** The pause as the store holds it now. */
async function reread(asking: Asking, pause: PauseRecord): Promise<PauseRecord> {
  return (await asking.services.store.pauses.findByTenantIdAndPauseId(
    asking.tenantId,
    pause.pauseId,
  )) as PauseRecord;
}

/** Where the pause waits, as its record keeps it: the step, its branch and its frame. */
function pauseStepOf(asking: Asking): PauseStep {
  const { agent, nodeId, loop, call, callIndex, branch, step } = asking.request;
  const innermost = branch?.launches.at(-1);
  const context: StepContext =
    innermost?.itemIndex === undefined ? step : { ...step, itemIndex: innermost.itemIndex };
  return {
    record: stepRecord(agent, { nodeId, loop, call, callIndex, branch }),
    context,
    ...(branch === undefined ? {} : { branch }),
    tenant: asking.frame.tenant,
    workflow: asking.frame.workflow,
    env: asking.frame.env,
  };
}

/** The idempotency key of a level's pause: the step's for the tool's own channel, with the level after it. */
function keyOf(asking: Asking, level = asking.level): string {
  const key = asking.request.step.idempotencyKey as string;
  return level === 0 ? key : `${key}#escalation-${level}`;
}

/**
 * The step's pause as the call that moves this pass answered it just before (see
 * `ExecutionFrame.answered`), taken from the frame: a step run again in the same pass reads it. Whatever
 * it says, the take that follows is a conditional update that reads the pause again when it finds it
 * moved on.
 */
function answeredNow(
  frame: ExecutionFrame,
  tenantId: string,
  idempotencyKey: string,
): PauseRecord | undefined {
  const { answered } = frame;
  if (answered === undefined) return undefined;
  for (const [pauseId, pause] of answered) {
    if (pause.tenantId !== tenantId || pause.idempotencyKey !== idempotencyKey) continue;
    answered.delete(pauseId);
    // The pass puts whole pause records in the frame (see `ExecutionFrame.answered`).
    return pause as PauseRecord;
  }
  return undefined;
}

/**
 * Finds the step's pause by its idempotency key, or creates it Pending and not yet sent. When the pause
 * is gone while a later level's exists (retention removed escalated pauses whose step still waits), it
 * says so instead: `removed` is the next level's asking, `next` the later pause found.
 */
async function findOrCreatePause(
  asking: Asking,
): Promise<PauseRecord | { readonly removed: Asking; readonly next: PauseRecord }> {
  const { services, request, channel, frame, tenantId, ask } = asking;
  const { store, clock } = services;
  const { agent, fence } = request;
  const idempotencyKey = keyOf(asking);
  // A re-entered step (the usual case on a resume) finds its record with a read, unless the call that
  // answered it just stored it (see `answeredNow`); only a first visit writes. In the pass that starts
  // the execution the tool's own pause is a first visit: nothing of it can be stored yet, so the step
  // creates it unread.
  if (frame.starting !== true || asking.level > 0) {
    const found = await store.pauses.findByTenantIdAndIdempotencyKey(tenantId, idempotencyKey);
    if (found !== undefined) return found;
    // Retention may have removed several escalated levels of a long chain: any later level's pause
    // says this one was escalated. The step then passes this level and looks again at the next. (A chain
    // has an end: assembly refuses an escalation cycle.)
    const to = asking.deadlines?.escalate?.to;
    let level = asking.level;
    for (let on = to; to !== undefined && on !== undefined; on = on.deadlines?.escalate?.to) {
      level += 1;
      const next = await store.pauses.findByTenantIdAndIdempotencyKey(tenantId, keyOf(asking, level));
      if (next !== undefined) {
        return {
          removed: { ...asking, channel: to, deadlines: to.deadlines, level: asking.level + 1 },
          next,
        };
      }
    }
  }
  const pauseStep = pauseStepOf(asking);
  const askedAt = clock.now();
  const deadlines = firstDeadline(asking.deadlines, askedAt, asking.escalatedFrom);
  return await store.pauses.findOrCreate(
    {
      tenantId,
      pauseId: newPauseId(),
      idempotencyKey,
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
      askedAt,
      resolvedAt: undefined,
      ...deadlines,
    },
    fence,
  );
}

/**
 * Sends the question of a pause not sent yet, and handles what the channel says. An answer given at
 * once is taken here: returns its Approval. Otherwise returns the pause as the store holds it now:
 * marked sent with the channel's ref (`await-reply`), or as the take or the mark found it.
 */
async function sendOnce(
  asking: Asking,
  pause: PauseRecord,
): Promise<{ readonly approval: Approval } | { readonly pause: PauseRecord }> {
  const outcome = await send(asking, pause);
  if (outcome.kind !== "await-reply") {
    // Closed meanwhile, the pause owes no withdrawal: the channel did not wait on it.
    const approval = await takeAtOnce(asking, pause, outcome).catch(async (error: unknown) => {
      await forgoOwedWithdrawal(asking, pause);
      throw error;
    });
    if (approval !== undefined) return { approval };
    await forgoOwedWithdrawal(asking, pause);
    return { pause: await reread(asking, pause) };
  }
  return { pause: await markSent(asking, pause, outcome.ref, asking.services.clock.now()) };
}

/**
 * Drops a withdrawal the pause may owe since it was closed while its `send` ran (see
 * `PauseRecord.withdrawalOwedAt`): for a question the channel failed to ask, or decided at once. Best
 * effort, as a withdrawal is.
 */
async function forgoOwedWithdrawal(asking: Asking, pause: PauseRecord): Promise<void> {
  await asking.services.store.pauses.forgoWithdrawal(asking.tenantId, pause.pauseId).catch(() => undefined);
}

/** Calls the channel's `send` in the step's frame; a throw, or anything but a ChannelOutcome, fails the agent. */
async function send(asking: Asking, pause: PauseRecord): Promise<ChannelOutcome> {
  const { services, request, channel, frame, ask } = asking;
  const handler = services.container.get(channel.cls) as ChannelHandler;
  let outcome: unknown;
  try {
    outcome = await traced(
      services.tracing,
      spanOf(frame),
      {
        name: `agboss.pause.ask ${channel.name}`,
        attributes: () => ({
          ...frameAttributes(frame),
          ...pauseAttributes(pause),
          "agboss.channel": channel.name,
          "gen_ai.tool.name": request.tool.name,
          "gen_ai.tool.call.id": request.call.id,
        }),
      },
      () =>
        ExecutionContext.run({ ...frame, step: request.step }, () =>
          handler.send({
            pauseId: pause.pauseId,
            kind: kindOfChannel(channel),
            value: ask,
          }),
        ),
    );
  } catch (error) {
    // Closed meanwhile, the pause owes no withdrawal: the channel failed to ask.
    await forgoOwedWithdrawal(asking, pause);
    const reason = error instanceof Error ? error.message : String(error);
    throw failed(asking, `channel "${channel.name}" failed to ask about ${request.tool.name}: ${reason}`, {
      cause: error,
    });
  }
  if (!ChannelOutcome.is(outcome)) {
    throw failed(
      asking,
      `channel "${channel.name}" returned something other than ChannelOutcome.awaitReply() or ${
        channel.answer === undefined ? "ChannelOutcome.decided(…)" : "ChannelOutcome.answered(…)"
      }.`,
    );
  }
  return outcome;
}

/**
 * The channel decided (an approval role) or answered (a question role) at once: checks that the outcome
 * fits the role, validates it, and takes the pause with it (fenced). Returns the Approval, or undefined
 * when the take found the pause no longer Pending.
 */
async function takeAtOnce(
  asking: Asking,
  pause: PauseRecord,
  outcome: ChannelOutcome,
): Promise<Approval | undefined> {
  const { services, request, channel, tenantId } = asking;
  const question = channel.answer !== undefined;
  if (question !== (outcome.kind === "answered")) {
    throw failed(
      asking,
      question
        ? `channel "${channel.name}" asks a question (its answer is a ${channel.answer?.name}): answer at once with ChannelOutcome.answered(…), not decided(…).`
        : `channel "${channel.name}" approves calls: decide at once with ChannelOutcome.decided(…), not answered(…).`,
    );
  }
  let value: PauseAnswerValue;
  try {
    value = validatePauseAnswer(
      request.tool,
      outcome.kind === "answered" ? outcome.answer : outcome.decision,
    );
  } catch (error) {
    throw failed(
      asking,
      `channel "${channel.name}" ${question ? "answered with an invalid answer" : "decided with an invalid decision"}.`,
      { cause: error },
    );
  }
  const taken = await closeWithAudit(services, () =>
    services.store.pauses.take(
      tenantId,
      pause.pauseId,
      { at: services.clock.now(), answer: value, resolution: PauseResolution.Decided },
      request.fence,
    ),
  );
  if (taken === undefined) return undefined;
  return withPause(outcomeOf(value, request.input, channel.name), taken);
}

/**
 * The channel will wait for a reply: marks the pause sent with the channel's ref (checked to be small
 * JSON), and returns the pause as the store holds it now. When the pause was closed while `send` was
 * still returning, the channel is told it is withdrawn.
 */
async function markSent(
  asking: Asking,
  pause: PauseRecord,
  outcomeRef: unknown,
  returnedAt: number,
): Promise<PauseRecord> {
  const { services, request, channel, tenantId } = asking;
  const ref = checkedRef(
    outcomeRef,
    () => `channel "${channel.name}"`,
    (why) => {
      throw failed(asking, why);
    },
  );
  const sent = await services.store.pauses
    .markSent(tenantId, pause.pauseId, request.fence, ref)
    .catch(async (error: unknown) => {
      // Taken over while send ran (`app.cancel` on another instance): the channel is still told of a
      // pause closed meanwhile, by this step, once; then this pass stops.
      if (!(error instanceof LeaseLostError)) throw error;
      await tellClosedMeanwhile(asking, await reread(asking, pause), ref, returnedAt);
      throw error;
    });
  if (sent !== undefined) return sent;
  const now = await reread(asking, pause);
  // Closed while send was still returning: this step tells the channel, now that it can.
  await tellClosedMeanwhile(asking, now, ref, returnedAt);
  return now;
}

/**
 * Tells the channel of a pause closed while its `send` ran, with the ref `send` returned (at
 * `returnedAt`). Whoever marks the closed pause sent tells (`claimWithdrawal`): this step, or the
 * recovery sweep once the withdrawal it owes comes due, or a closer that found this step's lease lapsed
 * and took it for gone (see `closePending`). When another told first, with no ref, the question may not
 * have been up yet: this step tells again where it knows where the question is (it has a ref), and also
 * without one when its `send` returned a lease's lifetime or more after the close, when the sweep may
 * have told before the question was up.
 */
async function tellClosedMeanwhile(
  asking: Asking,
  closed: PauseRecord,
  ref: unknown,
  returnedAt: number,
): Promise<void> {
  if (closed.status !== PauseStatus.Cancelled) return;
  const { services, tenantId } = asking;
  const resolution = closed.resolution as "withdrawn" | "cancelled";
  let now = closed;
  if (!now.isSent) {
    const claimed = await services.store.pauses.claimWithdrawal(tenantId, now.pauseId, ref);
    if (claimed !== undefined) {
      await tellWithdrawn(services, claimed, resolution);
      return;
    }
    now = await reread(asking, now);
  }
  if (now.channelRef !== undefined) return;
  const slow = now.resolvedAt !== undefined && returnedAt >= now.resolvedAt + LEASE_TTL_MS;
  if (ref === undefined && !slow) return;
  await tellWithdrawn(services, { ...now, isSent: true, channelRef: ref }, resolution);
}

/**
 * A pause the call that moves this pass took for it, under the pass's lease, in the commit that started
 * the pass (`app.resume` does, see `ExecutionFrame.answered`): nothing is left to write before the tool.
 * The lease is confirmed where the step's own take would have proved it (see `confirmLeaseUnchanged`),
 * so a holder that lost its tree meanwhile starts nothing.
 */
async function takenForThisPass(
  asking: Asking,
  pause: PauseRecord,
): Promise<{ pause: PauseRecord; takenNow: boolean }> {
  await confirmLeaseUnchanged(asking.services, asking.request.fence);
  return { pause, takenNow: true };
}

/**
 * Waits for the answer: a pause still Pending interrupts the task (the step runs again once it is
 * answered); a resumed or Resolved pause is taken (fenced), or read again when another run took it first.
 */
async function waitAndTake(
  asking: Asking,
  pause: PauseRecord,
): Promise<{ pause: PauseRecord; takenNow: boolean }> {
  const { services, request, tenantId } = asking;
  if (pause.status === PauseStatus.Pending) interrupt({ pauseId: pause.pauseId });
  // Resumed (or found answered): the answer is usually there to take; the pause is read again only
  // when it is not (taken by a holder that died, or withdrawn).
  if (pause.status !== PauseStatus.Pending && pause.status !== PauseStatus.Resolved) {
    return { pause, takenNow: false };
  }
  const taken = await services.store.pauses.take(
    tenantId,
    pause.pauseId,
    { at: services.clock.now() },
    request.fence,
  );
  return taken === undefined
    ? { pause: await reread(asking, pause), takenNow: false }
    : { pause: taken, takenNow: true };
}

/**
 * How the call goes on from its pause: a pause still without an answer fails the agent, a withdrawn one
 * stops the branch, and any other is read as an {@link Approval}.
 */
function approvalOf(asking: Asking, pause: PauseRecord, takenNow: boolean): Approval {
  if (pause.status === PauseStatus.Pending || pause.status === PauseStatus.Resolved) {
    throw failed(asking, `pause ${pause.pauseId} was resumed but holds no answer.`);
  }
  if (pause.status === PauseStatus.Cancelled && pause.resolution === PauseResolution.Withdrawn) {
    // The launch no longer needs this branch: stop it, so its join can go on.
    throw new BranchWithdrawnError(pause.pauseId, pause.answer?.withdrawnBy);
  }
  if (pause.resolution === PauseResolution.Expired) return expiredOf(asking, pause, takenNow);
  return answerOf(pause, asking.request.input, takenNow);
}

/**
 * How a pause its deadline resolved goes on: a failure fails the agent (a `PauseExpiredError` as its
 * cause), a rejection tells the model nobody answered in time, an approval or an answer goes on to the tool.
 */
function expiredOf(asking: Asking, pause: PauseRecord, takenNow: boolean): Approval {
  const failure = pause.answer?.failure;
  if (failure !== undefined) {
    const cause = new PauseExpiredError(pause.pauseId, pause.channel, failure.message);
    throw failed(asking, cause.message, { cause });
  }
  const decision = pause.answer?.decision;
  if (decision !== undefined && !decision.approved) {
    return {
      kind: "rejected",
      message: `the call was rejected: nobody answered ${pause.channel} in time${decision.reason === undefined ? "" : `: ${decision.reason}`}`,
    };
  }
  return answerOf(pause, asking.request.input, takenNow);
}
