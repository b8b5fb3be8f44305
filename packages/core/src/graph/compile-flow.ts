import { Command, END, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { AssembledAgent, AssembledFlow } from "../assembly/assembled-application.js";
import type { AnyClass } from "../container/component-registry.js";
import { ExecutionContext, type ExecutionFrame } from "../container/execution-context.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import { type CompiledAgentGraph, compileAgentGraph } from "./agent-nodes.js";
import { type ChildGraph, runChild } from "./child-execution.js";
import { FlowState, type FlowStateUpdate, type FlowStateValue } from "./flow-state.js";
import { inlineAgentStep, toolsNodeOf } from "./inline-agent.js";
import { branchNode, branchNodeOf, joinNode, joinNodeOf, launchNode, launchRouter } from "./launch-nodes.js";
import { leanGraph } from "./lean-graphs.js";
import { routeOf } from "./route.js";
import { tracedNode } from "./step-span.js";

/** Compiles a flow to a LangGraph graph on the store's checkpointer. @internal */
export function compileFlow(
  flow: AssembledFlow,
  services: RuntimeServices,
  checkpointer: BaseCheckpointSaver | undefined,
  flowOf: (start: AnyClass) => AssembledFlow,
  children: Map<AnyClass, ChildGraph> = new Map(),
) {
  // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic, which StateGraph's generics cannot express
  const graph = new StateGraph(FlowState) as unknown as StateGraph<any, any, any, string>;
  const agentGraphs = new Map<AssembledAgent, CompiledAgentGraph>();
  const agentGraphOf = (agent: AssembledAgent) => {
    let compiled = agentGraphs.get(agent);
    if (compiled === undefined) {
      compiled = compileAgentGraph(services, agent);
      agentGraphs.set(agent, compiled);
    }
    return compiled;
  };
  // Child flows compile as subgraphs (no checkpointer of their own: they checkpoint under their task).
  const childOf = (start: AnyClass) => {
    let graph = children.get(start);
    if (graph === undefined) {
      graph = compileFlow(flowOf(start), services, undefined, flowOf, children);
      children.set(start, graph);
    }
    return { flow: flowOf(start), graph };
  };
  const nextOf = (index: number) => flow.steps[index + 1]?.nodeId ?? END;
  flow.steps.forEach((step, index) => {
    const previous = flow.steps[index - 1];
    const inputOf = (state: FlowStateValue) =>
      previous === undefined ? state.run.input : state.run.outputs[previous.nodeId];
    if (step.kind === "parallel") {
      graph.addNode(step.nodeId, tracedNode(services, step.nodeId, launchNode(services, step)));
      graph.addNode(
        branchNodeOf(step.nodeId),
        tracedNode(services, branchNodeOf(step.nodeId), branchNode(services, step, agentGraphOf, childOf)),
      );
      graph.addNode(
        joinNodeOf(step.nodeId),
        tracedNode(services, joinNodeOf(step.nodeId), joinNode(services, step)),
      );
      graph.addConditionalEdges(step.nodeId, routeOf(launchRouter(step, inputOf)), [
        branchNodeOf(step.nodeId),
        joinNodeOf(step.nodeId),
      ]);
      graph.addEdge(branchNodeOf(step.nodeId), joinNodeOf(step.nodeId));
      return;
    }
    if (step.kind === "workflow") {
      const node = async (state: FlowStateValue): Promise<FlowStateUpdate> => {
        const parent = ExecutionContext.current() as ExecutionFrame;
        const child = childOf(step.start);
        const childId = `${parent.executionId}/${step.nodeId}`;
        const done = await runChild(child.flow, child.graph, {
          childId,
          input: inputOf(state),
          branch: parent.branch,
        });
        return { run: { outputs: { [step.nodeId]: done.output }, children: { [childId]: done.summary } } };
      };
      graph.addNode(step.nodeId, tracedNode(services, step.nodeId, node));
      return;
    }
    const agentStep = inlineAgentStep(services, {
      agent: step.agent,
      nodeId: step.nodeId,
      inputOf,
      next: nextOf(index),
    });
    graph.addNode(step.nodeId, tracedNode(services, step.nodeId, agentStep.model));
    graph.addNode(toolsNodeOf(step.nodeId), tracedNode(services, toolsNodeOf(step.nodeId), agentStep.tools));
    graph.addConditionalEdges(step.nodeId, routeOf(agentStep.route), agentStep.destinations);
    graph.addEdge(toolsNodeOf(step.nodeId), step.nodeId);
  });
  // The finish is checked when the graph returns (finishOutput), which saves a step and its checkpoint.
  graph.addEdge(START, flow.steps[0]?.nodeId ?? END);
  flow.steps.forEach((step, index) => {
    // An agent step routes on by itself (after its last model turn).
    if (step.kind === "agent") return;
    const exit = step.kind === "parallel" ? joinNodeOf(step.nodeId) : step.nodeId;
    graph.addEdge(exit, nextOf(index));
  });
  return leanGraph(graph.compile(checkpointer === undefined ? {} : { checkpointer }));
}

/**
 * What starts `flow`'s graph with `update` as its state. On a thread whose last checkpoint holds no
 * unfinished step (`finished`: a new thread, or one whose latest execution completed), a command that
 * writes the state and goes to the flow's first step, where the edge from START leads: plain input would
 * first run START's own node as a step, whose only work is to copy the input into the state (one task,
 * one checkpoint and one set of writes more per execution). Otherwise plain input: the last checkpoint
 * of a cancelled or failed execution may still hold the tasks of the step it stopped in, which input
 * marks as seen and a command would run again. @internal
 */
export function startOf(
  flow: AssembledFlow,
  update: FlowStateUpdate,
  finished: boolean,
): Command | FlowStateUpdate {
  const first = flow.steps[0]?.nodeId;
  return first === undefined || !finished ? update : new Command({ update, goto: first });
}

/** A compiled flow. @internal */
export type CompiledFlow = ReturnType<typeof compileFlow>;
