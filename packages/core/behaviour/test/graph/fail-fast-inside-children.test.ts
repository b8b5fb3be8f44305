import {
  Agent,
  AgentFailedError,
  Application,
  callTool,
  ExecutionStatus,
  FailurePolicy,
  PauseResolution,
  PauseStatus,
  replyWith,
  start,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { expect } from "vitest";
import { onEachBackendAndPostgres } from "../../src/backends.js";
import {
  ApprovedRefundTool,
  Desk,
  TestExpenseApprovalChannel,
  TestRefundApprovalChannel,
} from "../../src/fixtures/approval-app.js";
import { ScriptedModelProvider } from "../../src/fixtures/refund-app.js";

// A FailFast launch INSIDE a child execution: when one of its branches fails, the pauses of its other
// branches are obsolete at once, as they are for a launch of the root — withdrawn in the same call,
// the channel told once, the child's join run, and the failure carried up — at any depth.

@Agent({
  name: "inner-clerk-agent",
  description: "Asks for a refund",
  prompt: "Refund.",
  model: "scripted/inner-clerk",
  tools: [ApprovedRefundTool],
})
class InnerClerkAgent {}
@Agent({ name: "inner-broken-agent", description: "Fails", prompt: "Fail.", model: "scripted/inner-broken" })
class InnerBrokenAgent {}
@Agent({
  name: "inner-after-agent",
  description: "After the launch",
  prompt: "Go on.",
  model: "scripted/after",
})
class InnerAfterAgent {}
@Agent({ name: "calm-agent", description: "Answers", prompt: "Answer.", model: "scripted/calm" })
class CalmAgent {}
@Agent({ name: "outer-join-agent", description: "Joins", prompt: "Join.", model: "scripted/outer-join" })
class OuterJoinAgent {}

@WorkflowStart({ name: "inner-launch-workflow-start", description: "A launch", input: WorkflowStartTextDto })
class InnerLaunchStart {}
@WorkflowStart({ name: "calm-workflow-start", description: "Calm", input: WorkflowStartTextDto })
class CalmStart {}
@WorkflowStart({ name: "middle-workflow-start", description: "Wraps", input: WorkflowStartTextDto })
class MiddleStart {}
@WorkflowStart({ name: "direct-root-workflow-start", description: "One child", input: WorkflowStartTextDto })
class DirectRootStart {}
@WorkflowStart({ name: "fan-root-workflow-start", description: "Two children", input: WorkflowStartTextDto })
class FanRootStart {}
@WorkflowStart({ name: "deep-root-workflow-start", description: "A grandchild", input: WorkflowStartTextDto })
class DeepRootStart {}
@WorkflowFinish({ name: "nested-workflow-finish", description: "Done", output: WorkflowFinishTextDto })
class NestedFinish {}

@Workflow({
  name: "nested-children-workflow",
  version: "1.0.0",
  flow: [
    start(InnerLaunchStart)
      .toParallel([InnerClerkAgent, InnerBrokenAgent])
      .toAgent(InnerAfterAgent)
      .toFinish(NestedFinish),
    start(CalmStart).toAgent(CalmAgent).toFinish(NestedFinish),
    start(MiddleStart).toWorkflow(InnerLaunchStart).toFinish(NestedFinish),
  ],
})
class NestedChildrenWorkflow {}

@Workflow({
  name: "nested-roots-workflow",
  version: "1.0.0",
  flow: [
    start(DirectRootStart).toWorkflow(InnerLaunchStart).toFinish(NestedFinish),
    start(FanRootStart)
      .toParallelWorkflows([CalmStart, InnerLaunchStart], { failurePolicy: FailurePolicy.CollectAll })
      .toAgent(OuterJoinAgent)
      .toFinish(NestedFinish),
    start(DeepRootStart).toWorkflow(MiddleStart).toFinish(NestedFinish),
  ],
})
class NestedRootsWorkflow {}

@Application({
  name: "nested-failfast-application",
  workflows: [NestedRootsWorkflow, NestedChildrenWorkflow],
  providers: [Desk, ScriptedModelProvider, TestRefundApprovalChannel, TestExpenseApprovalChannel],
})
class NestedFailFastApplication {}

const run = { ownerId: "alice", tenant: { tenantId: "acme" } } as const;

onEachBackendAndPostgres(NestedFailFastApplication, (test) => {
  for (const [label, root, depth] of [
    ["a child", DirectRootStart, 1],
    ["a grandchild", DeepRootStart, 2],
  ] as const) {
    test(`a FailFast launch inside ${label}: one branch fails, the other's pause is withdrawn and the execution fails in the same call`, async ({
      app,
      mockLlm,
      mockOf,
      store,
    }) => {
      const withdraw = mockOf(TestRefundApprovalChannel).withdraw;
      mockLlm(InnerClerkAgent).thenReturn(
        callTool(ApprovedRefundTool, { orderId: "ord_1", amountCents: 100 }),
      );
      mockLlm(InnerBrokenAgent).thenReturn(() => Promise.reject(new Error("inner branch broke")));
      mockLlm(InnerAfterAgent).thenReturn(replyWith("went on"));
      const threadId = `t-nested-${depth}`;
      const error = await app.execute(root, { text: "go" }, { ...run, threadId }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AgentFailedError);
      expect((error as Error).message).toContain("inner branch broke");
      const pauses = await store.pauses.list({ tenantId: "acme", threadId });
      expect(pauses).toHaveLength(1);
      expect(pauses[0]).toMatchObject({
        status: PauseStatus.Cancelled,
        resolution: PauseResolution.Withdrawn,
      });
      expect(withdraw).toHaveBeenCalledTimes(1);
      expect(app.get(Desk).refunds).toEqual([]);
      expect(mockLlm(InnerAfterAgent).calls).toHaveLength(0);
    });
  }

  test("a FailFast launch inside one branch of a CollectAll launch: its waiting pause is withdrawn, the outer join collects its failure beside the sibling's output", async ({
    app,
    mockLlm,
    mockOf,
    store,
  }) => {
    const withdraw = mockOf(TestRefundApprovalChannel).withdraw;
    mockLlm(InnerClerkAgent).thenReturn(callTool(ApprovedRefundTool, { orderId: "ord_2", amountCents: 200 }));
    mockLlm(InnerBrokenAgent).thenReturn(() => Promise.reject(new Error("inner branch broke")));
    mockLlm(CalmAgent).thenReturn(replyWith("calm done"));
    mockLlm(OuterJoinAgent).thenReturn(replyWith("joined"));
    const result = await app.execute(FanRootStart, { text: "go" }, { ...run, threadId: "t-nested-fan" });
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.output).toEqual({ text: "joined" });
    const pauses = await store.pauses.list({ tenantId: "acme", threadId: "t-nested-fan" });
    expect(pauses.map((p) => [p.status, p.resolution])).toEqual([
      [PauseStatus.Cancelled, PauseResolution.Withdrawn],
    ]);
    // The audit trail says which launch withdrew it: the one inside the second child, not the root's.
    const record = await app.record(result.executionId, { tenantId: "acme" });
    const innerChild = pauses[0]?.executionId as string;
    expect(innerChild.startsWith(`${result.executionId}/`)).toBe(true);
    expect(record?.pauses[0]?.withdrawnBy).toEqual({ executionId: innerChild, launchId: expect.any(String) });
    expect(withdraw).toHaveBeenCalledTimes(1);
    const joinInput =
      mockLlm(OuterJoinAgent).calls[0]?.messages.find((m) => m.role === "user")?.content ?? "";
    expect(joinInput).toContain("calm done");
    expect(joinInput).toContain("inner branch broke");
  });
});
