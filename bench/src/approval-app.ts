import {
  Agent,
  Application,
  Channel,
  type ChannelAsk,
  ChannelOf,
  ChannelOutcome,
  ChannelRole,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  callTool,
  Dto,
  ExecutionContext,
  Injectable,
  ModelProvider,
  type ModelProviderHandler,
  PauseAnswerer,
  replyWith,
  start,
  Tool,
  type ToolHandler,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { z } from "zod";

// The application `pause-resume` and `resume-latency` run: a customer asks for a refund, the agent calls
// the refund tool once, the tool's channel asks a manager and the execution rests until `app.resume`
// brings the manager's decision; then the tool runs and the agent answers with a text.

export const REFUND_PROMPT = "You refund orders when a manager approves, and say so in one sentence.";
export const REFUND_REQUEST = "Please refund my order o-1001.";
export const REFUND_ARGS = { orderId: "o-1001", amountCents: 2599 } as const;
export const REFUND_ANSWER = "Your refund for o-1001 is on its way.";
export const REFUND_TOOL_NAME = "refund-order-tool";
export const REFUND_TOOL_DESCRIPTION = "Refunds an order; a manager approves first.";
/** Who answers the channel's pauses in `app.resume({ … }, { tenantId, answeredBy })`. */
export const MANAGER = "manager-17";

/** The tool's input fields; the raw LangGraph side validates the same. */
export const refundInput = { orderId: z.string().min(1), amountCents: z.number().int().positive() };
/** A manager's decision as the raw LangGraph side checks it (AGBoss validates its own decision DTO). */
export const decisionSchema = z.object({ approved: z.boolean() });

export class RefundRequestDto extends Dto(refundInput) {}
export class RefundDoneDto extends Dto({ orderId: z.string(), status: z.string() }) {}

export function refund(input: { orderId: string; amountCents: number }): {
  orderId: string;
  status: string;
} {
  return { orderId: input.orderId, status: `refunded ${input.amountCents}` };
}

/** Counts tool runs per side, to check that every round trip ran the tool exactly once. */
export const refundRuns = { agboss: 0, langgraph: 0 };

/**
 * Where the refund tool notes each run, besides {@link refundRuns}. Does nothing here; `recovery`'s
 * worker processes replace it (`createApp(…, { providers })`) with a ledger file that every process
 * appends to, keyed by the step's idempotency key, so the parent can count the runs of each tool call.
 */
@Injectable()
export class RefundLedger {
  record(): void {}
}

/**
 * Where the channel leaves each pauseId, by `tenantId/threadId`: the stand-in for the manager's inbox
 * (a `Channel` pause's id is shown to the channel only, never in `result.pending`).
 */
@Injectable()
export class ManagerInbox {
  readonly #waiting = new Map<string, string>();

  put(key: string, pauseId: string): void {
    this.#waiting.set(key, pauseId);
  }

  /** The pauseId the channel was given for `tenantId/threadId`; throws when there is none. */
  take(key: string): string {
    const pauseId = this.#waiting.get(key);
    if (pauseId === undefined) throw new Error(`the approval channel was not asked on ${key}`);
    this.#waiting.delete(key);
    return pauseId;
  }

  get size(): number {
    return this.#waiting.size;
  }
}

@ChannelRole({
  name: "refund-approval-channel",
  description: "A manager approves refunds",
  approves: RefundRequestDto,
  answeredBy: PauseAnswerer.Channel,
})
export abstract class RefundApprovalChannel extends ChannelOf<RefundApprovalChannel> {}

/** Hands the pauseId to the inbox and leaves the execution waiting. */
@Channel({
  name: "bench-refund-approval-channel",
  description: "Leaves the pauseId in the manager's inbox",
  deps: [ManagerInbox, ExecutionContext],
})
export class BenchRefundApprovalChannel extends RefundApprovalChannel {
  constructor(
    private readonly inbox: ManagerInbox,
    private readonly context: ExecutionContext,
  ) {
    super();
  }

  send(ask: ChannelAsk<RefundApprovalChannel>): Promise<ChannelOutcome<RefundApprovalChannel>> {
    this.inbox.put(`${this.context.tenant.tenantId}/${this.context.threadId}`, ask.pauseId);
    return Promise.resolve(ChannelOutcome.awaitReply());
  }
}

@Tool({
  name: REFUND_TOOL_NAME,
  description: REFUND_TOOL_DESCRIPTION,
  input: RefundRequestDto,
  output: RefundDoneDto,
  channel: RefundApprovalChannel,
  deps: [RefundLedger],
})
export class RefundOrderTool implements ToolHandler<RefundRequestDto, RefundDoneDto> {
  constructor(private readonly ledger: RefundLedger) {}

  run(input: RefundRequestDto): RefundDoneDto {
    refundRuns.agboss += 1;
    this.ledger.record();
    return refund(input);
  }
}

@Agent({
  name: "refund-agent",
  description: "Refunds orders once a manager approves",
  prompt: REFUND_PROMPT,
  model: "bench/refund-scripted",
  tools: [RefundOrderTool],
})
export class RefundAgent {}

@WorkflowStart({
  name: "refund-workflow-start",
  description: "A refund request",
  input: WorkflowStartTextDto,
})
export class RefundStart {}

@WorkflowFinish({ name: "refund-workflow-finish", description: "The answer", output: WorkflowFinishTextDto })
export class RefundFinish {}

@Workflow({
  name: "refund-workflow",
  version: "1.0.0",
  flow: [start(RefundStart).returns(WorkflowStartTextDto).toAgent(RefundAgent).toFinish(RefundFinish)],
})
export class RefundWorkflow {}

/**
 * The same two turns on every thread, decided from the conversation (so threads may interleave): call
 * the refund tool, and once its result is there, answer. The raw LangGraph side's model does the same.
 */
class RefundScriptedModel implements ChatModel {
  invoke(request: ChatRequest): Promise<ChatResponse> {
    const last = request.messages.at(-1);
    return Promise.resolve(
      last?.role === "tool" ? replyWith(REFUND_ANSWER) : callTool(RefundOrderTool, { ...REFUND_ARGS }),
    );
  }
}

@ModelProvider({ name: "bench-refund-model-provider", serves: ["*"] })
export class RefundModelProvider implements ModelProviderHandler {
  chatModel(): ChatModel {
    return new RefundScriptedModel();
  }
}

/** The approval application's name (the SQL tracer finds its statements by it on Postgres). */
export const APPROVAL_APP_NAME = "bench-approval-application";

@Application({
  name: APPROVAL_APP_NAME,
  workflows: [RefundWorkflow],
  providers: [ManagerInbox, RefundLedger, RefundModelProvider, BenchRefundApprovalChannel],
})
export class ApprovalApplication {}
