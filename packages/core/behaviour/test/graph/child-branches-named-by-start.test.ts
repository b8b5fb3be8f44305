import {
  Agent,
  Application,
  FailurePolicy,
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
import { ScriptedModelProvider } from "../../src/fixtures/refund-app.js";

// Core bugs found by the depth-3 property test of parallel-launches.property.test.ts.
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
