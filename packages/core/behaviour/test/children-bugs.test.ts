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
import { onEachBackend } from "../src/backends.js";
import {
  ApprovedRefundTool,
  Desk,
  TestExpenseApprovalChannel,
  TestRefundApprovalChannel,
} from "../src/fixtures/approval-app.js";
import { ScriptedModelProvider } from "../src/fixtures/refund-app.js";

// Core bugs found by the depth-3 property test of tests/test/parallel.property.test.ts.
//
// Fixed in 7650c4e: toParallelWorkflows named each branch by its start class's JavaScript name (`w.name`
// in launchRouter) and branchNode found the child flow with `step.workflows.find((w) => w.name ===
// task.agent)`. Two @WorkflowStart classes with the same JavaScript name (a factory, two modules each
// declaring `class Start`, classes built at run time) made every such branch run the FIRST one's flow,
// and a branch's `branch` in the join's results was that JavaScript name, not the start's component
// name (an agent branch's is its component name, e.g. "legal-agent").

/** A start whose JavaScript class name is the same for every call: `ChildStart`. */
function childStart(name: string) {
  @WorkflowStart({ name: `${name}-workflow-start`, description: name, input: WorkflowStartTextDto })
  class ChildStart {}
  return ChildStart;
}
const AlphaStart = childStart("alpha");
const BetaStart = childStart("beta");

@Agent({ name: "alpha-agent", description: "Alpha", prompt: "Alpha.", model: "scripted/alpha" })
class AlphaAgent {}
@Agent({ name: "beta-agent", description: "Beta", prompt: "Beta.", model: "scripted/beta" })
class BetaAgent {}
@Agent({ name: "twins-join-agent", description: "Joins", prompt: "Join.", model: "scripted/join" })
class TwinsJoinAgent {}
@WorkflowStart({ name: "twins-workflow-start", description: "Both children", input: WorkflowStartTextDto })
class TwinsStart {}
@WorkflowFinish({ name: "twins-workflow-finish", description: "Done", output: WorkflowFinishTextDto })
class TwinsFinish {}

@Workflow({
  name: "twin-children-workflow",
  version: "1.0.0",
  flow: [
    start(AlphaStart).toAgent(AlphaAgent).toFinish(TwinsFinish),
    start(BetaStart).toAgent(BetaAgent).toFinish(TwinsFinish),
  ],
})
class TwinChildrenWorkflow {}

@Workflow({
  name: "twins-workflow",
  version: "1.0.0",
  flow: [
    start(TwinsStart)
      .toParallelWorkflows([AlphaStart, BetaStart], { failurePolicy: FailurePolicy.CollectAll })
      .toAgent(TwinsJoinAgent)
      .toFinish(TwinsFinish),
  ],
})
class TwinsWorkflow {}

@Application({
  name: "twins-application",
  workflows: [TwinsWorkflow, TwinChildrenWorkflow],
  providers: [ScriptedModelProvider],
})
class TwinsApplication {}

const run = { ownerId: "alice", tenant: { tenantId: "acme" } } as const;

onEachBackend(TwinsApplication, (test) => {
  // Failed before 7650c4e: alpha-agent was called twice and beta-agent never; results[1] was alpha's output.
  test("toParallelWorkflows runs each listed start's own flow, even when the start classes share a JavaScript name", async ({
    app,
    mockLlm,
  }) => {
    mockLlm(AlphaAgent).thenReturn(replyWith("alpha done"), replyWith("alpha again"));
    mockLlm(BetaAgent).thenReturn(replyWith("beta done"));
    const join = mockLlm(TwinsJoinAgent).thenReturn((r) => replyWith(r.messages.at(-1)?.content ?? ""));
    await app.execute(TwinsStart, { text: "go" }, { ...run, threadId: "t-twins" });
    expect(mockLlm(AlphaAgent).calls).toHaveLength(1);
    expect(mockLlm(BetaAgent).calls).toHaveLength(1);
    const joined = JSON.parse(join.calls[0]?.messages.at(-1)?.content ?? "{}") as {
      results: { index: number; branch: string; output?: { text: string } }[];
    };
    expect(joined.results.map((r) => r.output?.text)).toEqual(["alpha done", "beta done"]);
  });

  // Failed before 7650c4e: the branches were named "ChildStart" (the JavaScript class name) twice.
  test("a child branch is named by its start's component name, as an agent branch is by the agent's", async ({
    app,
    mockLlm,
  }) => {
    mockLlm(AlphaAgent).thenReturn(replyWith("alpha done"), replyWith("alpha again"));
    mockLlm(BetaAgent).thenReturn(replyWith("beta done"));
    const join = mockLlm(TwinsJoinAgent).thenReturn((r) => replyWith(r.messages.at(-1)?.content ?? ""));
    await app.execute(TwinsStart, { text: "go" }, { ...run, threadId: "t-twins-names" });
    const joined = JSON.parse(join.calls[0]?.messages.at(-1)?.content ?? "{}") as {
      results: { branch: string }[];
    };
    expect(joined.results.map((r) => r.branch)).toEqual(["alpha-workflow-start", "beta-workflow-start"]);
  });
});

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
    start(WaitingChildStart).toParallel([WaitingClerkAgent]).toAgent(AfterLaunchAgent).toFinish(TwinsFinish),
    start(BrokenChildStart).toAgent(BrokenAgent).toFinish(TwinsFinish),
    start(TwoWaitingChildStart)
      .toParallel([WaitingClerkAgent, SecondWaitingClerkAgent])
      .toAgent(AfterLaunchAgent)
      .toFinish(TwinsFinish),
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
      .toFinish(TwinsFinish),
    start(TwoWithdrawnRootStart)
      .toParallelWorkflows([TwoWaitingChildStart, BrokenChildStart], {
        failurePolicy: FailurePolicy.FailFast,
      })
      .toAgent(WithdrawJoinAgent)
      .toFinish(TwinsFinish),
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
