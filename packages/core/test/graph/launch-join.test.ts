import { describe, expect, test } from "vitest";
import { ExecutionContext, type ExecutionFrame } from "../../src/container/execution-context.js";
import { StepFailedError } from "../../src/errors/step-failed-error.js";
import type { FlowStateValue } from "../../src/graph/flow-state.js";
import { joinNode, launchDecided } from "../../src/graph/launch-nodes.js";

// A FailFast launch after a recovery: branch 1 failed in the pass before, and branch 2, kept from
// starting by that failure, stored its withdrawn result, while branch 1's own result was not stored.
const step = { kind: "parallel", nodeId: "review", quorum: undefined, options: {}, onJoinError: [] };
const services = { clock: { now: () => 1_000 } };
const frame = { tenant: { tenantId: "acme" }, executionId: "e-1", rootExecutionId: "e-1" };
const failure = { name: "AgentFailedError", code: "agent.failed", message: "ledger offline" };

function stateWith(results: Record<string, unknown>): FlowStateValue {
  return { run: { launches: { review: { startedAt: 0, results } } } } as unknown as FlowStateValue;
}

describe("a FailFast launch whose branch was kept from starting by a sibling's failure", () => {
  const state = stateWith({
    "0": { index: 0, branch: "legal-agent", output: { text: "legal ok" } },
    "2": {
      index: 2,
      branch: "ops-agent",
      withdrawn: true,
      withdrawnFor: { index: 1, branch: "finance-agent", error: failure },
    },
  });

  test("is decided, and its join fails with that failure though the failed branch's own result is missing", () => {
    expect(launchDecided(step as never, state, 1_000)).toBe(true);
    const joined = () =>
      ExecutionContext.run(frame as unknown as ExecutionFrame, () =>
        joinNode(services as never, step as never)(state),
      );
    expect(joined).toThrow(StepFailedError);
    expect(joined).toThrow("Branch 1 (finance-agent) failed: ledger offline");
  });

  test("goes on with its results when no branch failed or was kept from starting", () => {
    const done = stateWith({ "0": { index: 0, branch: "legal-agent", output: { text: "legal ok" } } });
    expect(launchDecided(step as never, done, 1_000)).toBe(false);
    const out = ExecutionContext.run(frame as unknown as ExecutionFrame, () =>
      joinNode(services as never, step as never)(done),
    );
    expect(out).toEqual({
      run: {
        outputs: { review: { results: [{ index: 0, branch: "legal-agent", output: { text: "legal ok" } }] } },
      },
    });
  });
});
