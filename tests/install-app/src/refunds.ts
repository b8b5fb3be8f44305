// A small application as a user writes it, against the published packages: a tool that waits for the
// thread owner's approval, an agent that calls it, a workflow around the agent.
import {
  Agent,
  Application,
  Channel,
  type ChannelAsk,
  ChannelOf,
  ChannelOutcome,
  ChannelRole,
  type ChatRequest,
  callTool,
  Dto,
  ModelProvider,
  type ModelProviderHandler,
  PauseAnswerer,
  replyWith,
  ScriptedChatModel,
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

export class RefundInputDto extends Dto({
  orderId: z.string().min(1),
  amountCents: z.number().int().positive(),
  reason: z.enum(["damaged", "late"]).optional(),
}) {}
export class RefundOutputDto extends Dto({ refundId: z.string() }) {}

/** Every refund the tool made, to show that it ran once, after the approval. */
export const refunds: string[] = [];

@ChannelRole({
  name: "refund-approval-channel",
  description: "The customer confirms the refund",
  approves: RefundInputDto,
  answeredBy: PauseAnswerer.ThreadOwner,
})
export abstract class RefundApprovalChannel extends ChannelOf<RefundApprovalChannel> {}

@Channel({ name: "inbox-refund-approval-channel", description: "Leaves the question in an inbox" })
export class InboxRefundApprovalChannel extends RefundApprovalChannel {
  send(ask: ChannelAsk<RefundApprovalChannel>): Promise<ChannelOutcome<RefundApprovalChannel>> {
    const amount: number = ask.value.arguments.amountCents;
    void amount;
    return Promise.resolve(ChannelOutcome.awaitReply());
  }
}

@Tool({
  name: "refund-card-tool",
  description: "Refunds a card payment",
  input: RefundInputDto,
  output: RefundOutputDto,
  channel: RefundApprovalChannel,
})
export class RefundCardTool implements ToolHandler<RefundInputDto, RefundOutputDto> {
  run({ orderId }: RefundInputDto): RefundOutputDto {
    refunds.push(orderId);
    return { refundId: `rf_${orderId}` };
  }
}

// A DTO's type is its zod fields' types, read through the application's zod.
export const sample: RefundInputDto = { orderId: "ord_1", amountCents: 1200 };

@Agent({
  name: "refund-agent",
  description: "Refunds orders",
  prompt: "Refund what the customer asks for.",
  model: "scripted",
  tools: [RefundCardTool],
})
export class RefundAgent {}

@WorkflowStart({ name: "refund-workflow-start", description: "A request", input: WorkflowStartTextDto })
export class RefundWorkflowStart {}

@WorkflowFinish({ name: "refund-workflow-finish", description: "The reply", output: WorkflowFinishTextDto })
export class RefundWorkflowFinish {}

@Workflow({
  name: "refund-workflow",
  version: "1.0.0",
  flow: [
    start(RefundWorkflowStart)
      .returns(WorkflowStartTextDto)
      .toAgent(RefundAgent)
      .toFinish(RefundWorkflowFinish),
  ],
})
export class RefundWorkflow {}

// A model that decides from the conversation, as a real one would: refund first, then say so.
function refundTurn(request: ChatRequest) {
  const refunded = request.messages.some((message) => message.role === "tool");
  return refunded ? replyWith("Refunded ord_1.") : callTool(RefundCardTool, sample);
}

@ModelProvider({ name: "scripted-model-provider", serves: ["*"] })
export class ScriptedModelProvider implements ModelProviderHandler {
  chatModel() {
    return new ScriptedChatModel([refundTurn], { loop: true });
  }
}

@Application({
  name: "refund-application",
  workflows: [RefundWorkflow],
  providers: [ScriptedModelProvider, InboxRefundApprovalChannel],
})
export class RefundApplication {}
