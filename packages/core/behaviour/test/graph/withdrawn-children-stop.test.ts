import {
  Agent,
  AgentFailedError,
  Application,
  callTool,
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
import { onEachBackend } from "../../src/backends.js";
import {
  ApprovedRefundTool,
  Desk,
  TestExpenseApprovalChannel,
  TestRefundApprovalChannel,
} from "../../src/fixtures/approval-app.js";
import { ScriptedModelProvider } from "../../src/fixtures/refund-app.js";

// Found by the depth-3 property test of parallel-launches.property.test.ts (see also
// child-branches-named-by-start.test.ts).

@WorkflowFinish({ name: "withdraw-workflow-finish", description: "Done", output: WorkflowFinishTextDto })
class WithdrawFinish {}

const run = { ownerId: "alice", tenant: { tenantId: "acme" } } as const;

// A FailFast failure in the root's launch withdraws the pauses inside a sibling child (its branch path
// names the root's launch). Before 7650c4e a launch INSIDE that child caught the withdrawal as its own
// branch's and the child went on to its later steps (an agent ran after the root had decided to fail);
// now the launch inside the child rethrows it so the whole child stops.
//
// Still failing (after 7650c4e): when TWO OR MORE branches of the launch inside the child are withdrawn
// in the same pass, each rethrows its BranchWithdrawnError in the same superstep, and LangGraph rejects
// the child's invoke with one aggregate error ("Multiple errors occurred during superstep N", the
// withdrawals in its `errors` field, not its cause chain). The root's branchNode does not see a
// BranchWithdrawnError through `hasCause`, so it records the child branch as FAILED with that message;
// the root's FailFast join then picks the lowest failed index — the withdrawn child — and the execution
// fails with "Multiple errors occurred during superstep …" instead of the sibling's real failure (and a
// CollectAll / quorum / onJoinError would see an error where the branch was withdrawn).

@Agent({
  name: "waiting-clerk-agent",
  description: "Asks for a refund",
  prompt: "Refund.",
  model: "scripted/clerk",
  tools: [ApprovedRefundTool],
})
class WaitingClerkAgent {}
@Agent({
  name: "after-launch-agent",
  description: "Runs after the child's launch",
  prompt: "Go on.",
  model: "scripted/after",
})
class AfterLaunchAgent {}
@Agent({ name: "broken-agent", description: "Fails", prompt: "Fail.", model: "scripted/broken" })
class BrokenAgent {}
@Agent({ name: "withdraw-join-agent", description: "Joins", prompt: "Join.", model: "scripted/join" })
class WithdrawJoinAgent {}

@WorkflowStart({
  name: "waiting-child-workflow-start",
  description: "A launch that waits",
  input: WorkflowStartTextDto,
})
class WaitingChildStart {}
@WorkflowStart({ name: "broken-child-workflow-start", description: "Fails", input: WorkflowStartTextDto })
class BrokenChildStart {}
@WorkflowStart({ name: "withdraw-root-workflow-start", description: "Both", input: WorkflowStartTextDto })
class WithdrawRootStart {}
@Agent({
  name: "second-waiting-clerk-agent",
  description: "Asks for a refund too",
  prompt: "Refund.",
  model: "scripted/clerk",
  tools: [ApprovedRefundTool],
})
class SecondWaitingClerkAgent {}
@WorkflowStart({
  name: "two-waiting-child-workflow-start",
  description: "A launch of two that wait",
  input: WorkflowStartTextDto,
})
class TwoWaitingChildStart {}
@WorkflowStart({
  name: "two-withdrawn-root-workflow-start",
  description: "Both",
  input: WorkflowStartTextDto,
})
class TwoWithdrawnRootStart {}

@Workflow({
  name: "withdraw-children-workflow",
  version: "1.0.0",
  flow: [
    start(WaitingChildStart)
      .toParallel([WaitingClerkAgent])
      .toAgent(AfterLaunchAgent)
      .toFinish(WithdrawFinish),
    start(BrokenChildStart).toAgent(BrokenAgent).toFinish(WithdrawFinish),
    start(TwoWaitingChildStart)
      .toParallel([WaitingClerkAgent, SecondWaitingClerkAgent])
      .toAgent(AfterLaunchAgent)
      .toFinish(WithdrawFinish),
  ],
})
class WithdrawChildrenWorkflow {}

@Workflow({
  name: "withdraw-root-workflow",
  version: "1.0.0",
  flow: [
    start(WithdrawRootStart)
      .toParallelWorkflows([WaitingChildStart, BrokenChildStart], { failurePolicy: FailurePolicy.FailFast })
      .toAgent(WithdrawJoinAgent)
      .toFinish(WithdrawFinish),
    start(TwoWithdrawnRootStart)
      .toParallelWorkflows([TwoWaitingChildStart, BrokenChildStart], {
        failurePolicy: FailurePolicy.FailFast,
      })
      .toAgent(WithdrawJoinAgent)
      .toFinish(WithdrawFinish),
  ],
})
class WithdrawRootWorkflow {}

@Application({
  name: "withdraw-application",
  workflows: [WithdrawRootWorkflow, WithdrawChildrenWorkflow],
  providers: [Desk, ScriptedModelProvider, TestRefundApprovalChannel, TestExpenseApprovalChannel],
})
class WithdrawApplication {}

onEachBackend(WithdrawApplication, (test) => {
  // Failed before 7650c4e: after-launch-agent was called once, after the withdrawal.
  test("a child withdrawn by the root's FailFast runs none of its later steps, even with a launch of its own", async ({
    app,
    mockLlm,
    store,
    mockOf,
  }) => {
    const withdraw = mockOf(TestRefundApprovalChannel).withdraw;
    mockLlm(WaitingClerkAgent).thenReturn(
      callTool(ApprovedRefundTool, { orderId: "ord_9", amountCents: 900 }),
    );
    mockLlm(BrokenAgent).thenReturn(() => Promise.reject(new Error("broken")));
    mockLlm(AfterLaunchAgent).thenReturn(replyWith("went on"));
    const error = await app
      .execute(WithdrawRootStart, { text: "go" }, { ...run, threadId: "t-withdrawn" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentFailedError);
    const pauses = await store.pauses.list({ tenantId: "acme", threadId: "t-withdrawn" });
    expect(pauses).toHaveLength(1);
    expect(pauses[0]).toMatchObject({ status: PauseStatus.Cancelled, resolution: PauseResolution.Withdrawn });
    expect(withdraw).toHaveBeenCalledTimes(1);
    expect(mockLlm(AfterLaunchAgent).calls).toHaveLength(0);
    expect(mockLlm(WithdrawJoinAgent).calls).toHaveLength(0);
  });

  // Fails today: the execution fails with "Multiple errors occurred during superstep …" (the two
  // withdrawals, aggregated by LangGraph) instead of broken-agent's failure.
  test("two branches withdrawn at once in a child's launch: the child ends withdrawn and the execution fails with the sibling's failure", async ({
    app,
    mockLlm,
    store,
    mockOf,
  }) => {
    const withdraw = mockOf(TestRefundApprovalChannel).withdraw;
    mockLlm(WaitingClerkAgent).thenReturn(
      callTool(ApprovedRefundTool, { orderId: "ord_1", amountCents: 100 }),
    );
    mockLlm(SecondWaitingClerkAgent).thenReturn(
      callTool(ApprovedRefundTool, { orderId: "ord_2", amountCents: 200 }),
    );
    mockLlm(BrokenAgent).thenReturn(() => Promise.reject(new Error("broken")));
    mockLlm(AfterLaunchAgent).thenReturn(replyWith("went on"));
    const error = await app
      .execute(TwoWithdrawnRootStart, { text: "go" }, { ...run, threadId: "t-two-withdrawn" })
      .catch((e: unknown) => e);
    const pauses = await store.pauses.list({ tenantId: "acme", threadId: "t-two-withdrawn" });
    expect(pauses).toHaveLength(2);
    for (const p of pauses)
      expect(p).toMatchObject({ status: PauseStatus.Cancelled, resolution: PauseResolution.Withdrawn });
    expect(withdraw).toHaveBeenCalledTimes(2);
    expect(mockLlm(AfterLaunchAgent).calls).toHaveLength(0);
    expect((error as Error).message).not.toMatch(/Multiple errors/);
    expect(error).toBeInstanceOf(AgentFailedError);
    expect((error as AgentFailedError).message).toContain("broken");
  });
});
