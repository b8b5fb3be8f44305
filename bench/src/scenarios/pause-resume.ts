import { performance } from "node:perf_hooks";
import { createApp, ExecutionStatus, type StoreFactory } from "@agboss/core";
import { tool } from "@langchain/core/tools";
import { Command, interrupt } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import {
  APPROVAL_APP_NAME,
  ApprovalApplication,
  decisionSchema,
  MANAGER,
  ManagerInbox,
  REFUND_ANSWER,
  REFUND_ARGS,
  REFUND_PROMPT,
  REFUND_REQUEST,
  REFUND_TOOL_DESCRIPTION,
  REFUND_TOOL_NAME,
  RefundStart,
  refund,
  refundInput,
  refundRuns,
} from "../approval-app.js";
import { type LangGraphCheckpointer, pairBackend } from "../backends.js";
import type { BenchSide, PhaseTimings } from "../measure.js";
import type { CallTimings } from "../store-timing.js";
import { TwoTurnLangChainModel } from "../two-turn-langchain-model.js";
import type { OpenedSide, PairScenario, ScenarioContext, SideName } from "./scenario.js";

// One round trip: execute → the refund tool's channel pauses the execution → a manager's decision
// resumes it → the tool runs → the agent answers. Both halves are timed apart (`pause`, `resume`).

const TENANT = "bench-tenant";

async function openAgboss(
  store: StoreFactory,
  timings: CallTimings | undefined,
  phases: PhaseTimings,
): Promise<BenchSide> {
  const app = await createApp(ApprovalApplication, { store });
  if (timings !== undefined) {
    const { threads, executions, leases, pauses, checkpointer } = app.store;
    for (const [name, target] of Object.entries({ threads, executions, leases, pauses, checkpointer })) {
      timings.wrap(target, name);
    }
  }
  const inbox = app.get(ManagerInbox);
  return {
    label: "agboss",
    async runOnce(iteration) {
      const threadId = `agboss-${iteration}`;
      const before = refundRuns.agboss;
      const t0 = performance.now();
      const paused = await app.execute(
        RefundStart,
        { text: REFUND_REQUEST },
        { threadId, ownerId: "customer-1", tenant: { tenantId: TENANT } },
      );
      const t1 = performance.now();
      if (paused.status !== ExecutionStatus.Paused || paused.pending.length !== 1) {
        throw new Error(`AGBoss round trip ${iteration} did not pause: ${paused.status}`);
      }
      const pauseId = inbox.take(`${TENANT}/${threadId}`);
      const done = await app.resume(
        { pauseId, decision: { approved: true } },
        { tenantId: TENANT, answeredBy: MANAGER },
      );
      const t2 = performance.now();
      const text = (done.output as { text?: unknown } | undefined)?.text;
      if (
        done.status !== ExecutionStatus.Completed ||
        text !== REFUND_ANSWER ||
        refundRuns.agboss !== before + 1
      ) {
        throw new Error(
          `AGBoss round trip ${iteration} ended ${done.status} with ${JSON.stringify(done.output)}`,
        );
      }
      phases.add("agboss", "pause", t1 - t0);
      phases.add("agboss", "resume", t2 - t1);
    },
    close: () => app.close(),
  };
}

function openLangGraph(
  checkpointer: LangGraphCheckpointer,
  timings: CallTimings | undefined,
  phases: PhaseTimings,
): BenchSide {
  timings?.wrap(checkpointer.saver, "checkpointer");
  // The tool asks first: `interrupt()` ends the pass on its first run; on resume the tool node runs the
  // tool again, `interrupt()` returns the decision, and the refund happens once, after approval.
  const refundTool = tool(
    (input: { orderId: string; amountCents: number }) => {
      const decision = decisionSchema.parse(interrupt({ tool: REFUND_TOOL_NAME, args: input }));
      if (!decision.approved) return "The manager declined the refund.";
      refundRuns.langgraph += 1;
      return JSON.stringify(refund(input));
    },
    { name: REFUND_TOOL_NAME, description: REFUND_TOOL_DESCRIPTION, schema: z.object(refundInput) },
  );
  const agent = createReactAgent({
    llm: new TwoTurnLangChainModel({ tool: REFUND_TOOL_NAME, args: REFUND_ARGS, answer: REFUND_ANSWER }),
    tools: [refundTool],
    prompt: REFUND_PROMPT,
    checkpointSaver: checkpointer.saver,
  });
  return {
    label: "langgraph",
    async runOnce(iteration) {
      const config = { configurable: { thread_id: `langgraph-${iteration}` } };
      const before = refundRuns.langgraph;
      const t0 = performance.now();
      const paused = await agent.invoke({ messages: [{ role: "user", content: REFUND_REQUEST }] }, config);
      const t1 = performance.now();
      const interrupts = (paused as { __interrupt__?: unknown[] }).__interrupt__;
      if (interrupts?.length !== 1 || refundRuns.langgraph !== before) {
        throw new Error(`LangGraph round trip ${iteration} did not pause`);
      }
      const done = await agent.invoke(new Command({ resume: { approved: true } }), config);
      const t2 = performance.now();
      const last = done.messages.at(-1);
      if (
        last?.content !== REFUND_ANSWER ||
        done.messages.length !== 4 ||
        refundRuns.langgraph !== before + 1
      ) {
        throw new Error(`LangGraph round trip ${iteration} ended with ${JSON.stringify(last?.content)}`);
      }
      phases.add("langgraph", "pause", t1 - t0);
      phases.add("langgraph", "resume", t2 - t1);
    },
    close: () => checkpointer.close(),
  };
}

export const pauseResumeScenario: PairScenario = {
  kind: "pair",
  id: "pause-resume",
  title: "pause → resume round trip",
  description:
    "execute until the refund tool's channel pauses, then app.resume approves, the tool runs and the agent answers (vs interrupt() + Command({ resume })); a new thread each time.",
  backends: ["sqlite", "postgres", "memory"],
  appName: APPROVAL_APP_NAME,
  notes: [
    "one execution = one round trip; pause = execute until it rests paused, resume = app.resume / Command({ resume }) until the answer",
  ],
  async openSide(context: ScenarioContext, which: SideName, phases: PhaseTimings): Promise<OpenedSide> {
    const backend = pairBackend(context, APPROVAL_APP_NAME);
    if (which === "agboss") {
      const side = await openAgboss(backend.agbossStore, context.trace?.agboss, phases);
      return { side, describe: () => Promise.resolve(backend.agbossDescription) };
    }
    const checkpointer = await backend.openCheckpointer();
    return {
      side: openLangGraph(checkpointer, context.trace?.langgraph, phases),
      describe: () => Promise.resolve(checkpointer.describe()),
    };
  },
};
