import {
  Agent,
  Application,
  callTool,
  createApp,
  Dto,
  ExecutionStatus,
  ModelProvider,
  type ModelProviderHandler,
  replyWith,
  ScriptedChatModel,
  type StoreFactory,
  start,
  Tool,
  type ToolHandler,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { type LangGraphCheckpointer, pairBackend } from "../backends.js";
import type { BenchSide } from "../measure.js";
import type { CallTimings } from "../store-timing.js";
import { TwoTurnLangChainModel } from "../two-turn-langchain-model.js";
import type { OpenedSide, PairScenario, ScenarioContext, SideName } from "./scenario.js";

// The work both sides do: the user asks about an order, the model calls the lookup tool once, reads its
// result and answers with a text. Same prompt, same tool, same input validation, same two model turns.
const APP_NAME = "bench-application";
const SYSTEM_PROMPT = "You look up orders and tell the customer where their order is, in one sentence.";
export const USER_TEXT = "Where is my order o-1001?";
const ORDER_ID = "o-1001";
export const ANSWER = "Your order o-1001 has shipped.";
const TOOL_NAME = "lookup-order-tool";
const TOOL_DESCRIPTION = "Looks up an order by id and returns its status.";

/** The tool's input fields: both sides validate the model's arguments against them before the tool runs. */
const lookupOrderInput = { orderId: z.string().min(1) };
class LookupOrderInputDto extends Dto(lookupOrderInput) {}
class LookupOrderOutputDto extends Dto({ orderId: z.string(), status: z.string() }) {}
type LookupOrderInput = InstanceType<typeof LookupOrderInputDto>;
type LookupOrderOutput = InstanceType<typeof LookupOrderOutputDto>;

function lookupOrder(orderId: string): LookupOrderOutput {
  return { orderId, status: "shipped" };
}

/** Counts tool runs per side, to check that every execution really called the tool. */
export const toolRuns = { agboss: 0, langgraph: 0 };

// ---------------------------------------------------------------------------------------------------
// AGBoss: start → agent (one tool) → finish, on the store `--backend` names.

@Tool({
  name: TOOL_NAME,
  description: TOOL_DESCRIPTION,
  input: LookupOrderInputDto,
  output: LookupOrderOutputDto,
})
class LookupOrderTool implements ToolHandler<LookupOrderInput, LookupOrderOutput> {
  run(input: LookupOrderInput): LookupOrderOutput {
    toolRuns.agboss += 1;
    return lookupOrder(input.orderId);
  }
}

@Agent({
  name: "order-status-agent",
  description: "Answers where an order is",
  prompt: SYSTEM_PROMPT,
  model: "bench/scripted",
  tools: [LookupOrderTool],
})
class OrderStatusAgent {}

@WorkflowStart({
  name: "order-status-workflow-start",
  description: "A customer's question",
  input: WorkflowStartTextDto,
})
export class OrderStatusStart {}

@WorkflowFinish({
  name: "order-status-workflow-finish",
  description: "The answer",
  output: WorkflowFinishTextDto,
})
class OrderStatusFinish {}

@Workflow({
  name: "order-status-workflow",
  version: "1.0.0",
  flow: [
    start(OrderStatusStart)
      .returns(WorkflowStartTextDto)
      .toAgent(OrderStatusAgent)
      .toFinish(OrderStatusFinish),
  ],
})
class OrderStatusWorkflow {}

/** Every execution gets the same two turns: call the tool, then answer (the script loops). */
@ModelProvider({ name: "bench-model-provider", serves: ["*"] })
class BenchModelProvider implements ModelProviderHandler {
  chatModel(): ScriptedChatModel {
    return new ScriptedChatModel([callTool(LookupOrderTool, { orderId: ORDER_ID }), replyWith(ANSWER)], {
      loop: true,
    });
  }
}

@Application({ name: APP_NAME, workflows: [OrderStatusWorkflow], providers: [BenchModelProvider] })
export class BenchApplication {}

async function openAgboss(store: StoreFactory, timings: CallTimings | undefined): Promise<BenchSide> {
  const app = await createApp(BenchApplication, { store });
  if (timings !== undefined) {
    const { threads, executions, leases, pauses, checkpointer } = app.store;
    for (const [name, target] of Object.entries({ threads, executions, leases, pauses, checkpointer })) {
      timings.wrap(target, name);
    }
  }
  return {
    label: "agboss",
    async runOnce(iteration) {
      const before = toolRuns.agboss;
      const result = await app.execute(
        OrderStatusStart,
        { text: USER_TEXT },
        { threadId: `agboss-${iteration}`, ownerId: "bench-user" },
      );
      const text = (result.output as { text?: unknown } | undefined)?.text;
      if (result.status !== ExecutionStatus.Completed || text !== ANSWER || toolRuns.agboss !== before + 1) {
        throw new Error(
          `AGBoss execution ${iteration} ended ${result.status} with ${JSON.stringify(result.output)}`,
        );
      }
    },
    close: () => app.close(),
  };
}

// ---------------------------------------------------------------------------------------------------
// Raw LangGraph: createReactAgent with the same tool and a scripted LangChain chat model, on the
// checkpointer `--backend` names (SqliteSaver, PostgresSaver or MemorySaver).

function openLangGraph(checkpointer: LangGraphCheckpointer, timings: CallTimings | undefined): BenchSide {
  timings?.wrap(checkpointer.saver, "checkpointer");
  const lookupTool = tool(
    (input: LookupOrderInput) => {
      toolRuns.langgraph += 1;
      return JSON.stringify(lookupOrder(input.orderId));
    },
    { name: TOOL_NAME, description: TOOL_DESCRIPTION, schema: z.object(lookupOrderInput) },
  );
  const agent = createReactAgent({
    llm: new TwoTurnLangChainModel({ tool: TOOL_NAME, args: { orderId: ORDER_ID }, answer: ANSWER }),
    tools: [lookupTool],
    prompt: SYSTEM_PROMPT,
    checkpointSaver: checkpointer.saver,
  });
  return {
    label: "langgraph",
    async runOnce(iteration) {
      const before = toolRuns.langgraph;
      const state = await agent.invoke(
        { messages: [{ role: "user", content: USER_TEXT }] },
        { configurable: { thread_id: `langgraph-${iteration}` } },
      );
      const last = state.messages.at(-1);
      if (last?.content !== ANSWER || state.messages.length !== 4 || toolRuns.langgraph !== before + 1) {
        throw new Error(`LangGraph execution ${iteration} ended with ${JSON.stringify(last?.content)}`);
      }
    },
    close: () => checkpointer.close(),
  };
}

export const oneToolAgentScenario: PairScenario = {
  kind: "pair",
  id: "one-tool-agent",
  title: "one-tool agent workflow",
  description:
    "start → agent → finish; the scripted model calls one tool, then answers (two model turns); each execution on a new thread.",
  backends: ["sqlite", "postgres", "memory"],
  appName: APP_NAME,
  async openSide(context: ScenarioContext, which: SideName): Promise<OpenedSide> {
    const backend = pairBackend(context, APP_NAME);
    if (which === "agboss") {
      const side = await openAgboss(backend.agbossStore, context.trace?.agboss);
      return { side, describe: () => Promise.resolve(backend.agbossDescription) };
    }
    const checkpointer = await backend.openCheckpointer();
    return {
      side: openLangGraph(checkpointer, context.trace?.langgraph),
      describe: () => Promise.resolve(checkpointer.describe()),
    };
  },
};
