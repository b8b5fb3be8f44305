// The crash suite's application: one agent whose model calls an approval-gated refund tool, then answers.
// What the tool, the model and the application's events do is written as JSON lines to files named by
// environment variables, so a parent process can see it across processes that it kills or freezes:
//   CRASH_LEDGER      the tool's tool-start / effect / tool-end lines, the model's turns, gate marks
//   CRASH_EVENTS      the application's events (start, pause, resume, finish, error) and the channel's asks
//   CRASH_EFFECTS     a directory standing for the payment API: one file per idempotency key applied
//   CRASH_GATE_*      gate files (see gate()): RESUME in onExecutionResume, TOOL_STARTED before the effect,
//                     EFFECT_APPLIED between the effect and its ledger line, AFTER_EFFECT after that line,
//                     MODEL before the model's turn that follows the tool, ASKED in the channel's send after
//                     it asked and before it returns (the pause not yet marked sent)
//   CRASH_SEND_REF    1: the channel's send returns a ref (where its question is)
import { randomUUID } from "node:crypto";
import { closeSync, openSync } from "node:fs";
import {
  Agent,
  Application,
  Channel,
  type ChannelAsk,
  ChannelOf,
  ChannelOutcome,
  ChannelRole,
  type ChannelWithdrawal,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  Dto,
  ExecutionContext,
  type ExecutionErrorEvent,
  type ExecutionFinishEvent,
  type ExecutionPauseEvent,
  type ExecutionResumeEvent,
  type ExecutionStartEvent,
  Injectable,
  ModelProvider,
  type ModelProviderHandler,
  PauseAnswerer,
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
import { effectPath, gate, journal, NO_KEY } from "./journal.js";

const env = (name: string): string | undefined => {
  const value = process.env[name];
  return value === undefined || value === "" ? undefined : value;
};

export class CrashRefundDto extends Dto({
  orderId: z.string().min(1),
  amountCents: z.number().int().positive(),
}) {}
export class CrashReceiptDto extends Dto({ status: z.string(), receipt: z.string() }) {}

/** The pause ids this process's channel was asked about, by execution. */
@Injectable()
export class CrashAsks {
  readonly byExecution = new Map<string, string>();
}

@ChannelRole({
  name: "crash-refund-approval-channel",
  description: "A manager approves refunds",
  approves: CrashRefundDto,
  answeredBy: PauseAnswerer.Channel,
})
export abstract class CrashRefundApprovalChannel extends ChannelOf<CrashRefundApprovalChannel> {}

@Channel({
  name: "crash-desk-channel",
  description: "Writes down what it is asked; a manager answers later",
  deps: [CrashAsks, ExecutionContext],
})
export class CrashDeskChannel extends CrashRefundApprovalChannel {
  constructor(
    private readonly asks: CrashAsks,
    private readonly context: ExecutionContext,
  ) {
    super();
  }

  async send(
    ask: ChannelAsk<CrashRefundApprovalChannel>,
  ): Promise<ChannelOutcome<CrashRefundApprovalChannel>> {
    this.asks.byExecution.set(this.context.executionId, ask.pauseId);
    const fields = { executionId: this.context.executionId, pauseId: ask.pauseId };
    journal(env("CRASH_EVENTS"), { event: "asked", ...fields });
    // Held here, a kill lands after the question was asked and before its pause is marked sent.
    await gate("asked", env("CRASH_GATE_ASKED"), env("CRASH_LEDGER"), this.context.signal, fields);
    // CRASH_SEND_REF=1: where the question is, kept with the pause and handed back to withdraw.
    return env("CRASH_SEND_REF") === "1"
      ? ChannelOutcome.awaitReply({ ref: { question: ask.pauseId } })
      : ChannelOutcome.awaitReply();
  }

  override withdraw(withdrawal: ChannelWithdrawal<CrashRefundApprovalChannel>): Promise<void> {
    journal(env("CRASH_EVENTS"), {
      event: "withdrawn",
      executionId: this.context.executionId,
      pauseId: withdrawal.pauseId,
      resolution: withdrawal.resolution,
      ref: withdrawal.ref ?? null,
    });
    return Promise.resolve();
  }
}

/**
 * Refunds like a payment API that dedupes by idempotency key: a second call with a key already applied
 * changes nothing, but is still a run. Every run is in the ledger, with the key it was given.
 */
@Tool({
  name: "crash-refund-tool",
  description: "Refunds an order through the payment API",
  input: CrashRefundDto,
  output: CrashReceiptDto,
  channel: CrashRefundApprovalChannel,
  deps: [ExecutionContext],
})
export class CrashRefundTool implements ToolHandler<CrashRefundDto, CrashReceiptDto> {
  constructor(private readonly context: ExecutionContext) {}

  async run(input: CrashRefundDto): Promise<CrashReceiptDto> {
    const ledger = env("CRASH_LEDGER");
    const key = this.context.step?.idempotencyKey;
    const signal = this.context.signal;
    const fields = { executionId: this.context.executionId, key, run: randomUUID() };
    journal(ledger, { event: "tool-start", ...fields });
    await gate("tool-started", env("CRASH_GATE_TOOL_STARTED"), ledger, signal, fields);
    // A careful client does not call the API once its call was cut off.
    if (signal.aborted) throw signal.reason;
    const applied = applyOnce(key ?? NO_KEY);
    // Held here, a kill lands after the payment API applied the key and before anything logged it.
    await gate("effect-applied", env("CRASH_GATE_EFFECT_APPLIED"), ledger, signal, { ...fields, applied });
    journal(ledger, { event: "effect", ...fields, applied, orderId: input.orderId });
    await gate("after-effect", env("CRASH_GATE_AFTER_EFFECT"), ledger, signal, fields);
    const receipt = `receipt-${fields.run}`;
    journal(ledger, { event: "tool-end", ...fields, receipt });
    return { status: `refunded ${input.orderId}`, receipt };
  }
}

/** The payment API's dedupe: true when this call applied the effect, false when the key was applied before. */
function applyOnce(key: string): boolean {
  const dir = env("CRASH_EFFECTS");
  if (dir === undefined) return true;
  try {
    closeSync(openSync(effectPath(dir, key), "wx"));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/** Calls the refund tool on the first turn (a fresh call id, like a real model), then answers done. */
class CrashModel implements ChatModel {
  async invoke(request: ChatRequest): Promise<ChatResponse> {
    const toolResult = request.messages.find((m) => m.role === "tool");
    if (toolResult === undefined) {
      const text = request.messages.find((m) => m.role === "user")?.content ?? "";
      const orderId = /order-[\w-]+/.exec(text)?.[0] ?? "order-unknown";
      return {
        content: "",
        toolCalls: [
          {
            id: `call_${randomUUID()}`,
            name: "crash-refund-tool",
            arguments: { orderId, amountCents: 1000 },
          },
        ],
      };
    }
    const ledger = env("CRASH_LEDGER");
    const executionId = ExecutionContext.current()?.executionId;
    journal(ledger, { event: "model-turn", executionId });
    await gate("model", env("CRASH_GATE_MODEL"), ledger, request.signal, { executionId });
    return { content: `done: ${toolResult.content}`, toolCalls: [] };
  }
}

@ModelProvider({ name: "crash-model-provider", serves: ["crash/*"] })
export class CrashModelProvider implements ModelProviderHandler {
  chatModel(): ChatModel {
    return new CrashModel();
  }
}

@Agent({
  name: "crash-refund-agent",
  description: "Refunds the order it is asked about",
  prompt: "Refund the order, then say so.",
  model: "crash/refunds",
  tools: [CrashRefundTool],
})
export class CrashRefundAgent {}

@WorkflowStart({ name: "crash-workflow-start", description: "A refund request", input: WorkflowStartTextDto })
export class CrashWorkflowStart {}

@WorkflowFinish({
  name: "crash-workflow-finish",
  description: "What was done",
  output: WorkflowFinishTextDto,
})
export class CrashWorkflowFinish {}

@Workflow({
  name: "crash-workflow",
  version: "1.0.0",
  flow: [
    start(CrashWorkflowStart)
      .returns(WorkflowStartTextDto)
      .toAgent(CrashRefundAgent)
      .toFinish(CrashWorkflowFinish),
  ],
})
export class CrashWorkflow {}

@Application({
  name: "crash-application",
  workflows: [CrashWorkflow],
  providers: [CrashAsks, CrashModelProvider, CrashDeskChannel],
})
export class CrashApplication {
  onExecutionStart(event: ExecutionStartEvent) {
    journal(env("CRASH_EVENTS"), { event: "start", executionId: event.executionId });
  }

  onExecutionPause(event: ExecutionPauseEvent) {
    journal(env("CRASH_EVENTS"), {
      event: "pause",
      executionId: event.executionId,
      pending: event.pending.length,
    });
  }

  async onExecutionResume(event: ExecutionResumeEvent) {
    const events = env("CRASH_EVENTS");
    journal(events, { event: "resume", executionId: event.executionId, answeredBy: event.answeredBy });
    // The holder has the tree's lease here and has not moved it yet: "before the tool".
    await gate("resume", env("CRASH_GATE_RESUME"), env("CRASH_LEDGER"), undefined, {
      executionId: event.executionId,
    });
  }

  onExecutionFinish(event: ExecutionFinishEvent) {
    journal(env("CRASH_EVENTS"), {
      event: "finish",
      executionId: event.executionId,
      status: event.output.status,
    });
  }

  onExecutionError(event: ExecutionErrorEvent) {
    const error = event.error;
    journal(env("CRASH_EVENTS"), {
      event: "error",
      executionId: event.executionId,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    });
  }
}
