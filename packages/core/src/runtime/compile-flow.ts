import { END, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { AssembledFlow } from "../assembly/assembled-application.js";
import { parseDto } from "../dto/dto.js";
import { StepFailedError } from "../errors/step-failed-error.js";
import { agentModelNode, agentRouter, agentToolNode } from "./agent-nodes.js";
import { FlowState, type FlowStateUpdate, type FlowStateValue } from "./flow-state.js";
import type { RuntimeServices } from "./runtime-services.js";

/** The node that validates and sets the flow's output. */
export const FINISH_NODE = "finish";

/** Compiles a flow to a LangGraph graph on the store's checkpointer. @internal */
export function compileFlow(
  flow: AssembledFlow,
  services: RuntimeServices,
  checkpointer: BaseCheckpointSaver,
) {
  // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic, which StateGraph's generics cannot express
  const graph = new StateGraph(FlowState) as unknown as StateGraph<any, any, any, string>;
  const executionIdOf = (s: FlowStateValue) => s.run.executionId;
  flow.steps.forEach((step, index) => {
    const previous = flow.steps[index - 1];
    const inputOf = (s: FlowStateValue) =>
      previous === undefined ? s.run.input : s.run.outputs[previous.nodeId];
    graph.addNode(step.nodeId, agentModelNode(services, step.agent, step.nodeId, inputOf));
    graph.addNode(`${step.nodeId}/tools`, agentToolNode(services, step.agent));
  });
  const last = flow.steps.at(-1);
  graph.addNode(FINISH_NODE, (state: FlowStateValue): FlowStateUpdate => {
    const value = last === undefined ? state.run.input : state.run.outputs[last.nodeId];
    try {
      return { run: { output: parseDto(flow.finish.output, value, `the output of ${flow.finish.name}`) } };
    } catch (error) {
      throw new StepFailedError(
        FINISH_NODE,
        `The flow's last step produced no valid ${flow.finish.output.name}.`,
        { cause: error },
      );
    }
  });
  graph.addEdge(START, flow.steps[0]?.nodeId ?? FINISH_NODE);
  flow.steps.forEach((step, index) => {
    const next = flow.steps[index + 1]?.nodeId ?? FINISH_NODE;
    graph.addConditionalEdges(step.nodeId, agentRouter(step.nodeId, next, executionIdOf), [
      step.nodeId,
      `${step.nodeId}/tools`,
      next,
    ]);
    graph.addEdge(`${step.nodeId}/tools`, step.nodeId);
  });
  graph.addEdge(FINISH_NODE, END);
  return graph.compile({ checkpointer });
}

/** A compiled flow. @internal */
export type CompiledFlow = ReturnType<typeof compileFlow>;
