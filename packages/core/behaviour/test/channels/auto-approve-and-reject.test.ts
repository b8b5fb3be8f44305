import {
  Agent,
  Application,
  AutoApproveChannel,
  AutoRejectChannel,
  callTool,
  ExecutionStatus,
  replyWith,
  start,
  Tool,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { testWith } from "@agboss/testing";
import { expect, vi } from "vitest";
import { DoneDto, ExpenseDto } from "../../src/fixtures/approval-app.js";
import { ScriptedModelProvider } from "../../src/fixtures/refund-app.js";

@Tool({
  name: "auto-expense-tool",
  description: "Books with auto approval",
  input: ExpenseDto,
  output: DoneDto,
  channel: AutoApproveChannel,
})
class AutoExpenseTool {
  run(input: ExpenseDto) {
    return { status: `auto-booked ${input.purpose}` };
  }
}
@Tool({
  name: "blocked-expense-tool",
  description: "Never allowed",
  input: ExpenseDto,
  output: DoneDto,
  channel: AutoRejectChannel,
})
class BlockedExpenseTool {
  readonly ran = vi.fn();
  run(input: ExpenseDto) {
    this.ran(input);
    return { status: "should not run" };
  }
}
@Agent({
  name: "auto-agent",
  description: "Books",
  prompt: "Book.",
  model: "scripted/x",
  tools: [AutoExpenseTool, BlockedExpenseTool],
})
class AutoAgent {}
@WorkflowStart({ name: "auto-workflow-start", description: "A request", input: WorkflowStartTextDto })
class AutoStart {}
@WorkflowFinish({ name: "auto-workflow-finish", description: "Done", output: WorkflowFinishTextDto })
class AutoFinish {}
@Workflow({
  name: "auto-workflow",
  version: "1.0.0",
  flow: [start(AutoStart).toAgent(AutoAgent).toFinish(AutoFinish)],
})
class AutoWorkflow {}
@Application({ name: "auto-application", workflows: [AutoWorkflow], providers: [ScriptedModelProvider] })
class AutoApplication {}

const autoTest = testWith(AutoApplication);
autoTest(
  "[TK-02] AutoApproveChannel and AutoRejectChannel named on a tool decide at once: no pause",
  async ({ app, mockLlm, store }) => {
    mockLlm(AutoAgent).thenReturn(
      callTool(AutoExpenseTool, { purpose: "taxi", amountCents: 100 }, [
        BlockedExpenseTool,
        { purpose: "yacht", amountCents: 9_000_000 },
      ]),
      replyWith("taxi booked, yacht refused"),
    );
    const result = await app.execute(AutoStart, { text: "book" }, { ownerId: "u" });
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.pending).toEqual([]);
    expect(app.get(BlockedExpenseTool).ran).not.toHaveBeenCalled();
    const toolMessages = mockLlm(AutoAgent)
      .calls[1]?.messages.filter((m) => m.role === "tool")
      .map((m) => m.content);
    expect(toolMessages).toEqual([
      '{"status":"auto-booked taxi"}',
      "Tool error: the call was rejected by auto-reject-channel: rejected automatically",
    ]);
    const pauses = await store.pauses.list({ tenantId: "default" });
    expect(pauses.map((p) => [p.channel, p.status, p.resolution]).sort()).toEqual([
      ["auto-approve-channel", "taken", "decided"],
      ["auto-reject-channel", "taken", "decided"],
    ]);
  },
);
